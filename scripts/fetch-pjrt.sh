#!/usr/bin/env bash
# Fetches the PJRT CPU plugin (the Python package xla-cpu-pjrt: its C API
# header and the plugin library) into .deps/pjrt/, for the pjrt backend and
# its tests on a machine without an accelerator. Idempotent; without pip or
# a package index the build goes on without the backend, saying so.
set -uo pipefail
dest=${1:-.deps/pjrt}
[ -f "$dest/include/pjrt_c_api.h" ] && [ -f "$dest/xla_cpu_pjrt.so" ] && exit 0
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "fetch-pjrt: no pip here; the pjrt backend is built only with a PJRT header (docs/PJRT.md)" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! python3 -m pip download -q --no-deps -d "$tmp" xla-cpu-pjrt >"$tmp/log" 2>&1; then
  echo "fetch-pjrt: could not download xla-cpu-pjrt ($(tail -1 "$tmp/log")); building without the pjrt backend" >&2
  exit 0
fi
python3 - "$tmp" "$dest" <<'PY' || { echo "fetch-pjrt: could not unpack the plugin; building without the pjrt backend" >&2; exit 0; }
import glob, os, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(tmp, "xla_cpu_pjrt-*.whl"))[0]
os.makedirs(os.path.join(dest, "include"), exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = os.path.basename(name)
        if base == "pjrt_c_api.h":
            out = os.path.join(dest, "include", base)
        elif base == "xla_cpu_pjrt.so":
            out = os.path.join(dest, base)
        else:
            continue
        with z.open(name) as src, open(out + ".part", "wb") as dst:
            dst.write(src.read())
        os.replace(out + ".part", out)
print("fetch-pjrt: the PJRT CPU plugin is in %s (%s)" % (dest, os.path.basename(wheel)), file=sys.stderr)
PY
