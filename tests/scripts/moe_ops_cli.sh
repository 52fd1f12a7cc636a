#!/usr/bin/env bash
# moe_ops_cli.sh SOLBENCH — the moe and ops areas end to end: every
# benchmark runs on small shapes and validates, the JSON carries the
# metrics they promise (imbalance, FLOPs and bytes by the documented
# formulas), one-expert routing reports imbalance = experts, and bad
# parameters exit 2 with a line naming the parameter; and scoped
# parameters (-p ops:tokens=..., -p ops.softmax:dtype=...) beside a triad.
set -u
sb=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
die() { echo "FAIL: $*" >&2; fail=1; }

"$sb" run --no-store --quiet --area moe,ops \
    -p tokens=64 -p d_model=64 -p ffn=32 -p experts=4 -p topk=2 -p skew=0.5 \
    -p d=128 -p head_dim=32 -p dtype=fp32,bf16 \
    --min-time 0.02 --repeat 3 --json "$d/r.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "run exited $?"; }
"$sb" run --no-store --quiet --bench moe.dispatch,moe.grouped_gemm \
    -p tokens=50 -p d_model=16 -p ffn=8 -p experts=8 -p topk=1 \
    -p force_expert=3 -p gated=1 \
    --min-time 0.02 --repeat 3 --json "$d/one.json" >"$d/out1" 2>&1 ||
    { cat "$d/out1"; die "one-expert run exited $?"; }
# every CPU benchmark `list` shows in the two areas must have run
"$sb" list | awk '/^(moe|ops)\./ && /\[cpu/ {print $1}' >"$d/listed"
python3 - "$d/r.json" "$d/one.json" "$d/listed" <<'PY' || fail=1
import json, sys
bad = []
res = json.load(open(sys.argv[1]))["results"]
names = sorted(set(r["bench"] for r in res))
want = sorted(open(sys.argv[3]).read().split())
# the ones this test was written with are among them
for b in ["moe.route", "moe.dispatch", "moe.combine", "moe.grouped_gemm",
          "ops.rmsnorm", "ops.swiglu", "ops.rope", "ops.softmax"]:
    if b not in want:
        bad.append("list does not show %s" % b)
if names != want:
    bad.append("benchmarks run %s, listed %s" % (names, want))
def m(r, key):
    return r["metrics"][key]["value"] if key in r["metrics"] else None
# The shapes of the run (T=64, D=64, E=4, k=2, F=32; ops T=64, d=128).
T, D, E, k, F, d = 64, 64, 4, 2, 32, 128
for r in res:
    if not r["valid"]:
        bad.append("%s %s not valid: %s" % (r["bench"], r["params"], r["notes"]))
    if not (m(r, "GBps") or 0) > 0:
        bad.append("%s: no GBps" % r["bench"])
    if r["bench"].startswith("moe."):
        imb = m(r, "imbalance")
        # an expert gets each token at most once: at most T of the T·k
        # slots, whose mean is T·k/E, so max/mean <= E/k
        if imb is None or not 1.0 <= imb <= E / k:
            bad.append("%s: imbalance %s not in [1, E/k]" % (r["bench"], imb))
# Byte and FLOP counts from the documented formulas.
expect = {
    ("moe.combine", "bytes"): 4*T*k*D + 4*T*D + 12*T*k,
    ("moe.combine", "flops"): 2*T*k*D,
    ("moe.route", "flops"): 2*T*D*E + 6*T*E + 2*T*k,
    ("moe.dispatch", "bytes"): 4*T*D + 4*T*k*D + 4*T*k + 16*T*k + 8*(E+1),
    ("ops.softmax", "bytes"): 2*4*T*d,
    ("ops.swiglu", "flops"): 4*T*d,
}
for (b, key), v in expect.items():
    got = [m(r, key) for r in res if r["bench"] == b]
    if not got or got[0] != v:
        bad.append("%s %s = %s, want %s" % (b, key, got, v))
bf = [r for r in res if r["bench"] == "ops.softmax" and "bf16" in json.dumps(r["params"])]
if not bf or m(bf[0], "bytes") != 2*2*T*d:
    bad.append("ops.softmax bf16 bytes: %s" % [m(r, "bytes") for r in bf])
for r in json.load(open(sys.argv[2]))["results"]:
    if not r["valid"]:
        bad.append("one expert: %s not valid: %s" % (r["bench"], r["notes"]))
    if m(r, "imbalance") != 8.0 or m(r, "active_experts") != 1.0:
        bad.append("one expert: %s imbalance %s active %s" %
                   (r["bench"], m(r, "imbalance"), m(r, "active_experts")))
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Scoped parameters: an op's dtype and the area's tokens beside a triad
# run in the same command (-p SCOPE:key=value: one benchmark or one area
# only, over the unscoped dtype=fp32 whatever the order).
"$sb" run --no-store --quiet --bench memory.triad,ops.softmax,ops.rmsnorm \
    -p size=1MiB -p ops.softmax:dtype=bf16 -p ops:tokens=16 -p d=64 \
    -p dtype=fp32 --min-time 0.01 --repeat 2 --json "$d/scope.json" >"$d/out2" 2>&1 ||
    { cat "$d/out2"; die "scoped run exited $?"; }
python3 - "$d/scope.json" <<'PY' || fail=1
import json, sys
res = {r["bench"]: r for r in json.load(open(sys.argv[1]))["results"]}
bad = []
for b, dt in {"memory.triad": "fp32", "ops.softmax": "bf16",
              "ops.rmsnorm": "fp32"}.items():
    if b not in res:
        bad.append("scoped: %s did not run" % b)
        continue
    p = res[b]["params"]
    if p.get("dtype") != dt:
        bad.append("scoped: %s dtype %s, want %s" % (b, p.get("dtype"), dt))
    if b.startswith("ops.") and str(p.get("tokens")) != "16":
        bad.append("scoped: %s tokens %s, want 16" % (b, p.get("tokens")))
    if not res[b]["valid"]:
        bad.append("scoped: %s not valid" % b)
for x in bad:
    print("FAIL:", x, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# bad input: exit 2, one line naming the parameter
expect_bad() {
    local what=$1; shift
    "$sb" run --no-store --quiet "$@" >"$d/bo" 2>"$d/be"
    local rc=$?
    if [[ $rc -ne 2 ]]; then die "$* exited $rc, want 2"; return; fi
    grep -q -- "$what" "$d/be" || die "$* message does not name $what: $(cat "$d/be")"
}
expect_bad topk --bench moe.route -p experts=8 -p topk=9
expect_bad topk --bench moe.dispatch -p topk=0
expect_bad experts --bench moe.combine -p experts=0
expect_bad force_expert --bench moe.grouped_gemm -p experts=8 -p force_expert=8
expect_bad skew --bench moe.route -p skew=2
expect_bad head_dim --bench ops.rope -p d=4096 -p head_dim=6
expect_bad dtype --bench ops.softmax -p dtype=fp16
expect_bad d_model --bench moe.dispatch -p d_model=100000
# a point far bigger than memory is refused before anything is allocated
expect_bad tokens --bench moe.dispatch -p tokens=4000000 -p d_model=65536 -p topk=8
exit $fail
