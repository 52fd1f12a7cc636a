#!/usr/bin/env python3
"""Light start: the commands that measure nothing map no heavy library.

solbench links none of cuBLAS, cuBLASLt, NCCL, the shared CUDA runtime or
oneDNN (they are opened with dlopen where a benchmark first needs them),
and `--help`, `list`, `hw list` and `history` each peak under 40 MB of
resident memory (cuBLASLt linked made it 225 MB). Usage: light_start.py
SOLBENCH"""
import os
import resource
import subprocess
import sys
import tempfile

sb = sys.argv[1]
heavy = ("libcublas", "libcublasLt", "libnccl", "libcudart", "libdnnl")
dyn = subprocess.run(["readelf", "-d", sb], capture_output=True, text=True,
                     check=True).stdout
needed = [l.split("[", 1)[1].rstrip("]") for l in dyn.splitlines()
          if "(NEEDED)" in l]
bad = [n for n in needed if n.startswith(heavy)]
assert not bad, f"linked at start-up: {bad}"

with tempfile.TemporaryDirectory() as d:
    env = dict(os.environ, SOLBENCH_DB=os.path.join(d, "r.db"))
    for args in (["--help"], ["list"], ["hw", "list"], ["history"]):
        p = subprocess.run([sb] + args, env=env, capture_output=True)
        assert p.returncode == 0, (args, p.stderr)
        # the largest of any child so far (an upper bound of this one's)
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"{' '.join(args)}: peak RSS at most {peak_kb / 1024:.1f} MB")
        assert peak_kb <= 40 * 1024, f"{args}: {peak_kb / 1024:.1f} MB > 40 MB"
print("light start: ok")
