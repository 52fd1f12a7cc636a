#!/usr/bin/env bash
# fleet_netns.sh — `solbench fleet run` on test hosts made on this machine:
# four network namespaces, each with its own hostname (unshare --uts) and
# a veth pair onto a bridge, every link shaped to 800 Mbit/s with tbf;
# Open MPI starts one rank in each through an rsh agent that runs
# `ip netns exec HOST ...`. The hosts share this machine's CPUs, so their
# suites run --stagger and the links --pairs serial. Cases:
#   a clean fleet: exit 0, nothing flagged, each host's run stored with
#     the fleet's id in its tags;
#   one host's link at 200 Mbit/s (a quarter): that host flagged for its
#     links and named as the cause of each slow link, no other;
#   one host under a 50 % CPU quota (cgroup cpu controller): flagged for
#     compute, not for its links;
#   the stored fleet read back (fleet list, show, baseline, the HTML
#     page) and a host 40 % below its own baseline figure flagged
#     against it;
#   the all-reduce between the hosts (1 and 64 MiB) within 25 % of the
#     model from the fleet's own link figures;
#   the watchdog: a host that hangs (SIGSTOP) or dies (SIGKILL, mpirun
#     --enable-recovery) ends the run at --timeout, the others kept;
#   one host only, no launcher, bad options: exit 2 with one line.
# Skips (77) where namespaces cannot be made (not root, no ip/tc/unshare)
# or there is no mpirun or no MPI in the build. Only the addresses of the
# hosts it makes are used.
# Usage: fleet_netns.sh SOLBENCH
set -u
SB=$(realpath "${1:?usage: $0 SOLBENCH}")
. "$(dirname "$0")/expect.sh"

skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "not root: test hosts are network namespaces"
for c in ip tc unshare mpirun python3; do
    command -v "$c" >/dev/null || skip "no $c"
done
"$SB" fleet run --no-store 2>&1 | grep -q 'has no MPI' && skip "this build has no MPI"

. "$(dirname "$0")/fleet_hosts.sh"

suite=(--bench compute.peak -p dtype=fp32 --threads 1 --min-time 0.3 --repeat 3
    --stagger --links --pairs serial --link-size 256KiB --link-time 0.5)

fleet() { # NAME [env...] -- extra options
    local name=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    env "${envs[@]}" "${mpi[@]}" --host "$hosts" "$SB" fleet run "${suite[@]}" \
        --json "$T/$name.json" --junit "$T/$name.xml" "$@" >"$T/$name.out" 2>&1
    echo $? >"$T/$name.rc"
}

# The timing-dependent cases hold in one of three tries: the test hosts
# take turns on this machine's CPUs, and its own variation in time can
# pass for a host's (scripts/fleet-rates.sh measures how often a case
# holds in one try: docs/FLEET.md); a wrong diagnosis fails all three.
try_case() { # NAME CHECK [env...] -- options
    local name=$1 check=$2
    shift 2
    local k
    for k in 1 2 3; do
        fleet "$name$k" "$@"
        if "$check" "$T/$name$k" >"$T/$name$k.why" 2>&1; then
            cp "$T/$name$k.json" "$T/$name.json"
            cp "$T/$name$k.xml" "$T/$name.xml"
            echo "$k" >"$T/$name.try"
            return 0
        fi
        echo "try $k of $name: $(tail -1 "$T/$name$k.why")"
    done
    cat "$T/$name$k.out"
    return 1
}

# ---- a clean fleet -----------------------------------------------------------
check_clean() {
    python3 - "$1.json" "$(cat "$1.rc")" "${H[@]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, hosts = int(sys.argv[2]), sys.argv[3:]
assert d["schema"] == "solbench.fleet/1" and d["rounds"] == 3
assert [h["host"] for h in d["hosts"]] == hosts
m = d["link_matrix"]
for i, row in enumerate(m["bw_Bps"]):
    for j, b in enumerate(row):
        # 800 Mbit/s is 100 MB/s; the best window carries nearly that
        assert (b is None) == (i == j) and (b is None or 80e6 < b < 110e6), (i, j, b)
for h in d["hosts"]:
    assert h["run"] and h["ranks"] == 1 and h["class"], h
    assert "compute.peak dtype=fp32 GFLOPs" in h["metrics"], h["metrics"]
assert d["flagged"] == [] and d["links"] == [], (d["flagged"], d["links"])
assert rc == 0 and d["healthy"] is True, f"exit {rc}"
PY
}
shape 800mbit
try_case clean check_clean -- --db "$T/clean.db"
ok_clean=$?
[ $ok_clean -eq 0 ] && ok "clean fleet: exit 0, nothing flagged, the link matrix at the shaped rate" ||
    bad "clean fleet"
# --stagger: three rounds, each host's run stored each round (every try's)
n=$("$SB" history --db "$T/clean.db" 2>/dev/null | grep -c 'compute')
want=$((12 * $(cat "$T/clean.try" 2>/dev/null || echo 3)))
[ "$n" -eq "$want" ] && ok "clean fleet: a run stored for each host and round" ||
    { bad "clean fleet: $n runs stored, want $want"; "$SB" history --db "$T/clean.db"; }
[ $ok_clean -eq 0 ] && grep -q 'failures="0"' "$T/clean.xml" &&
    ok "clean fleet: JUnit without failures" || bad "clean fleet: JUnit"

# ---- the stored fleet read back ----------------------------------------------
# fleet show judges the stored record again; a baseline holds each host
# against its own figures (here a copy of the clean fleet with one host's
# compute figure cut by 40 %, read from a file)
if [ $ok_clean -eq 0 ]; then
    nf=$("$SB" fleet list --db "$T/clean.db" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$nf" = "$(cat "$T/clean.try")" ] && ok "fleet list: a fleet record for each try" ||
        bad "fleet list: $nf fleets"
    "$SB" fleet show --db "$T/clean.db" --json "$T/show.json" --html "$T/show.html" >"$T/show.out" 2>&1
    rc=$?
    python3 - "$T/show.json" "$T/clean.json" <<'PY' && [ $rc -eq 0 ] && grep -q '<table' "$T/show.html" &&
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["fleet"] == b["fleet"] and a["healthy"] and a["flagged"] == []
assert [h["metrics"] for h in a["hosts"]] == [h["metrics"] for h in b["hosts"]]
assert a["link_matrix"] == b["link_matrix"]
PY
        ok "fleet show: the stored fleet read back as it was written, healthy, exit 0; its HTML page" ||
        { bad "fleet show (exit $rc)"; cat "$T/show.out"; }
    "$SB" fleet baseline good --db "$T/clean.db" >/dev/null &&
        "$SB" fleet show good --db "$T/clean.db" --quiet | grep -q healthy &&
        ok "fleet baseline: a name for the last fleet, shown by it" || bad "fleet baseline"
    python3 - "$T/clean.json" "$T/cut.json" "${H[1]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    if h["host"] == sys.argv[3]:
        for k in list(h["metrics"]):
            if k.startswith("compute.peak"):
                h["metrics"][k] *= 0.6
json.dump(d, open(sys.argv[2], "w"))
PY
    "$SB" fleet show "$T/cut.json" --baseline good --db "$T/clean.db" --json "$T/vs.json" >"$T/vs.out" 2>&1
    rc=$?
    python3 - "$T/vs.json" "${H[1]}" <<'PY' && [ $rc -eq 1 ] &&
import json, sys
d = json.load(open(sys.argv[1]))
vs = [f for f in d["flagged"] if f["against"] == "baseline"]
assert vs and {f["host"] for f in vs} == {sys.argv[2]}, d["flagged"]
assert all(f["metric"].startswith("compute.peak") and -45 < f["deviation_pct"] < -35 for f in vs), vs
assert d["baseline"]
PY
        ok "fleet show --baseline: the host 40 % below its own figure flagged against it, no other" ||
        { bad "fleet show --baseline (exit $rc)"; cat "$T/vs.out"; }
fi

# ---- the all-reduce between hosts against the model ---------------------------
# The model is the bandwidth-optimal ring's (as NCCL runs it); Open MPI's
# own choice for 4 ranks is not the ring over TCP (1.3x and 1.8x the
# model's time here), so the ring is asked for (coll_tuned algorithm 4).
check_colls() {
    python3 - "$1.json" "$(cat "$1.rc")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert int(sys.argv[2]) == 0, f"exit {sys.argv[2]}"
c = {x["bytes"]: x for x in d["collectives"] if x["level"] == "hosts"}
assert sorted(c) == [1 << 20, 64 << 20], d["collectives"]
for b, x in c.items():
    assert x["valid"] and x["ranks"] == 4 and x["predicted_s"] > 0, x
    r = x["seconds"] / x["predicted_s"]
    print(f"{int(b) >> 20} MiB: measured {x['seconds']*1e3:.2f} ms, model {x['predicted_s']*1e3:.2f} ms, ratio {r:.3f}")
    # 64 MiB is the links' bandwidth: within 25 %. 1 MiB is half latency,
    # and the latency of these shaped veth links on a 2-vCPU guest moves
    # 5x between pairs and runs (200-1200 us seen): at most 2x the model.
    assert 0.75 <= r <= (1.25 if b >= 64 << 20 else 2.0), (b, r)
cal = d["calibration"]["scaleout"]
assert 80e6 < cal["beta_Bps"] < 110e6 and 0 < cal["alpha_s"] < 1e-3, cal
PY
}
if try_case colls check_colls OMPI_MCA_coll_tuned_use_dynamic_rules=1 \
    OMPI_MCA_coll_tuned_allreduce_algorithm=4 -- --rounds 1 --collectives --no-store; then
    ok "the all-reduce between hosts against the model from the fleet's links (64 MiB within 25 %, 1 MiB within 2x) ($(grep -h MiB "$T/colls$(cat "$T/colls.try").why" | tr '\n' ' '))"
else
    bad "collectives against the model"
fi

# ---- one host's link at a quarter --------------------------------------------
check_slowlink() {
    python3 - "$1.json" "$(cat "$1.rc")" "${H[2]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, slow = int(sys.argv[2]), sys.argv[3]
assert rc == 1, f"exit {rc}"
assert {f["host"] for f in d["flagged"]} == {slow}, d["flagged"]
assert any(f["metric"] == "links.bw Bps" and f["deviation_pct"] < -60 for f in d["flagged"])
assert len(d["links"]) == 6, d["links"]
for l in d["links"]:
    assert slow in (l["from"], l["to"]) and l["cause"] == slow, l
PY
}
shape 800mbit 2 200mbit
if try_case slowlink check_slowlink -- --no-store; then
    ok "a link at a quarter: its host flagged and named as the cause, no other"
    grep -q "name=\"${H[2]}\"" "$T/slowlink.xml" && grep -q 'type="slow-link"' "$T/slowlink.xml" &&
        ok "a link at a quarter: JUnit failures for the host and the links" || bad "slow link: JUnit"
else
    bad "slow link"
fi

# ---- one host under a 50 % CPU quota -----------------------------------------
check_slowcpu() {
    python3 - "$1.json" "$(cat "$1.rc")" "${H[1]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, slow = int(sys.argv[2]), sys.argv[3]
assert rc == 1, f"exit {rc}"
assert {f["host"] for f in d["flagged"]} == {slow}, d["flagged"]
assert all(f["metric"].startswith("compute.peak") for f in d["flagged"]), d["flagged"]
assert d["links"] == [], d["links"]
PY
}
shape 800mbit
if [ -n "$cg" ]; then
    try_case slowcpu check_slowcpu FLEET_SLOW_CPU="${H[1]}" -- --no-store &&
        ok "a host under a 50 % CPU quota: flagged for compute, not for its links" ||
        bad "slow CPU"
else
    echo "skip: no writable cgroup cpu controller for the CPU quota case"
fi

# ---- the watchdog: a host that hangs, a host that dies -------------------------
# Host 2's solbench stopped (SIGSTOP: it hangs) or killed a second after it
# starts, before its turn: the run ends at --timeout, hosts 0 and 1 are
# reported and stored, host 2 is failed with the reason, host 3 (whose
# turn had not come) is not measured; exit 1. A rank that dies ends an
# Open MPI job at once unless mpirun is given --enable-recovery.
watch_case() { # NAME SIGNAL [mpirun options]
    local name=$1 sig=$2 mp p= i
    shift 2
    "${mpi[@]}" "$@" --host "$hosts" "$SB" fleet run "${suite[@]}" --rounds 1 \
        --timeout 10 --json "$T/$name.json" --db "$T/$name.db" >"$T/$name.out" 2>&1 &
    mp=$!
    for i in $(seq 1 300); do
        for q in $(ip netns pids "${H[2]}"); do
            [ "$(cat /proc/"$q"/comm 2>/dev/null)" = solbench ] && p=$q
        done
        [ -n "$p" ] && break
        sleep 0.1
    done
    sleep 1
    [ -n "$p" ] && kill -"$sig" "$p"
    SECONDS=0
    wait "$mp"
    echo $? >"$T/$name.rc"
    echo "$SECONDS" >"$T/$name.secs"
    [ -n "$p" ] && kill -9 "$p" 2>/dev/null
    python3 - "$T/$name.json" "$(cat "$T/$name.rc")" "$(cat "$T/$name.secs")" "${H[@]}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, secs, H = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
name = sys.argv[1].rsplit("/", 1)[1][:-5]
# mpirun --enable-recovery exits 0 whatever its ranks' codes (measured
# here); the verdict is in the report
assert (rc == 1 or (rc == 0 and name == "died")) and secs < 60, (rc, secs)
h = {x["host"]: x for x in d["hosts"]}
for k in H[:2]:
    assert not h[k]["failed"] and h[k]["run"] and h[k]["metrics"], h[k]
assert h[H[2]]["failed"] and "no report within 10 s" in h[H[2]]["why"], h[H[2]]
assert h[H[3]]["failed"] and "not measured" in h[H[3]]["why"], h[H[3]]
assert d["healthy"] is False
PY
}
shape 800mbit
watch_case hang STOP >"$T/hang.why" 2>&1 &&
    [ "$("$SB" history --db "$T/hang.db" | grep -c compute)" -eq 2 ] &&
    ok "a host that hangs: the run ends at --timeout ($(cat "$T/hang.secs") s), the others' runs kept, it named" ||
    { bad "watchdog: a host that hangs"; cat "$T/hang.why" "$T/hang.out"; }
watch_case died KILL --enable-recovery >"$T/died.why" 2>&1 &&
    ok "a host that dies (mpirun --enable-recovery): the run ends at --timeout ($(cat "$T/died.secs") s), it named" ||
    { bad "watchdog: a host that dies"; cat "$T/died.why" "$T/died.out"; }

# ---- refusals ----------------------------------------------------------------
expect 2 'all 2 ranks are on one host' -- "${mpi[@]}" --host "${H[0]}:2" "$SB" fleet run --no-store --bench compute.peak
expect 2 'MPI launcher' -- "$SB" fleet run --no-store
expect 2 "unknown option '--nope'" -- "$SB" fleet run --nope
expect 2 'network area runs between hosts' -- "${mpi[@]}" --host "$hosts" "$SB" fleet run --no-store --bench network.allreduce
expect 2 "unknown subcommand 'walk'" -- "$SB" fleet walk
# what rank 0 writes is checked before anything is measured, every rank stops
expect 2 'name the same file' -- "${mpi[@]}" --host "$hosts" "$SB" fleet run --bench compute.peak --no-store --json "$T/same" --junit "$T/same"
: >"$T/afile"
expect 2 'afile' -- "${mpi[@]}" --host "$hosts" "$SB" fleet run --bench compute.peak --db "$T/afile/x.db"
exit $fail
