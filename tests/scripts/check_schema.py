#!/usr/bin/env python3
"""Checks a run document against the solbench.run/1 schema (docs/SCHEMA.md):
every field present with its type, stats consistent with the samples,
metrics as {value, unit}. Exit 0 when it conforms."""
import json
import math
import statistics
import sys

def fail(msg):
    print("schema: " + msg)
    sys.exit(1)

doc = json.load(open(sys.argv[1]))
want_bench = sys.argv[2] if len(sys.argv) > 2 else None
top = {"schema": str, "run_id": str, "started_at": str, "ended_at": str,
       "system": dict, "config": dict, "tags": dict, "results": list}
for k, t in top.items():
    if not isinstance(doc.get(k), t):
        fail(f"$.{k}: missing or not {t.__name__}")
if doc["schema"] != "solbench.run/1":
    fail("$.schema is " + doc["schema"])
if not doc["started_at"].endswith("Z") or "T" not in doc["started_at"]:
    fail("$.started_at is not UTC ISO-8601")
if not isinstance(doc["system"].get("fingerprint"), str):
    fail("$.system.fingerprint missing")
for k in ("suite", "threads", "params", "backend", "topology"):
    if k not in doc["config"]:
        fail(f"$.config.{k} missing")
if not doc["results"]:
    fail("$.results is empty")
rtypes = {"bench": str, "area": str, "backend": str, "params": dict,
          "samples_s": list, "stats": dict, "metrics": dict, "valid": bool,
          "skipped": bool, "notes": list}
for i, r in enumerate(doc["results"]):
    p = f"$.results[{i}]"
    for k, t in rtypes.items():
        if not isinstance(r.get(k), t):
            fail(f"{p}.{k}: missing or not {t.__name__}")
    if r["skipped"]:
        continue
    s = r["samples_s"]
    if len(s) < 1 or any(not isinstance(x, (int, float)) or x <= 0 for x in s):
        fail(f"{p}.samples_s: empty or not positive")
    st = r["stats"]
    for k in ("n", "min", "p50", "p90", "p99", "max", "mean", "stddev", "cv"):
        if k not in st:
            fail(f"{p}.stats.{k} missing")
    if st["n"] != len(s) or not math.isclose(st["min"], min(s)) or \
       not math.isclose(st["max"], max(s)) or \
       not math.isclose(st["p50"], statistics.median(s), rel_tol=1e-9):
        fail(f"{p}.stats disagree with samples_s")
    for name, m in r["metrics"].items():
        if set(m) != {"value", "unit"}:
            fail(f"{p}.metrics.{name}: not {{value, unit}}")
    if "latency_us" not in r["metrics"]:
        fail(f"{p}.metrics.latency_us missing")
    if not r["valid"]:
        fail(f"{p}: not valid")
if want_bench:
    r = [r for r in doc["results"] if r["bench"] == want_bench]
    if not r:
        fail(f"no result for {want_bench}")
    m = r[0]["metrics"]
    if "GBps" not in m or not (0.1 < m["GBps"]["value"] < 10000):
        fail(f"{want_bench}: GBps missing or absurd")
    # GBps is bytes / median time: check the arithmetic.
    if "bytes" in m and not math.isclose(m["GBps"]["value"],
            m["bytes"]["value"] / r[0]["stats"]["p50"] / 1e9, rel_tol=1e-6):
        fail(f"{want_bench}: GBps != bytes / p50")
print("schema: ok")
