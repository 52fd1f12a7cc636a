#!/usr/bin/env bash
# store_drivers.sh SOLBENCH PART — the store on each of its drivers.
#   sqlite, pg: one suite, run on a SQLite file or on a private PostgreSQL
#          cluster (tests/scripts/lib/pg_cluster.sh): run ids and their
#          prefixes, history (and --json, and a --bench glob), baselines
#          of several runs, compare and the like-with-like refusal, the
#          gate (check), export and import (a run stored as it is skipped,
#          a changed run under a stored id refused, all or nothing),
#          profiler traces.
#   writers: 8 writers x 4 runs at once into PostgreSQL: 32 runs, then
#          one more: 33, none failed.
#   kill:  writers killed (SIGKILL) at 50 random moments, then the server
#          stopped mid-commit (pg_ctl stop -m immediate) 5 times: every
#          stored run whole (its results and samples all there), a writer
#          whose server went away exits 2 with one line.
#   import: a SQLite store (runs, a baseline of two runs, a trace, fleet
#          runs and a fleet baseline) into PostgreSQL: everything there; a
#          second import adds nothing; a withdrawn stable mark carried; a
#          fleet baseline or a baseline naming other runs under the same
#          name refuses the import, nothing changed.
# Exit 77 (skip) with the reason when no PostgreSQL server can be started.
set -u
S=$1
PART=$2
W=$(mktemp -d)
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/scripts/lib/pg_cluster.sh
. "$HERE/lib/pg_cluster.sh"
cleanup() { pg_cluster_stop; rm -rf "$W"; }
trap cleanup EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
tiny=(--quiet --bench memory.triad -p size=1MiB --min-time 0.01 --repeat 5)
# runs in the store, counted through solbench itself (either driver)
nruns() {
    "$S" history --last 0 --json - 2>/dev/null |
        python3 -c "import json,sys; print(len(json.load(sys.stdin)))"
}

if [ "$PART" = sqlite ]; then
    export SOLBENCH_DB=$W/r.db
else
    mkdir -p "$W/pg"
    chmod 755 "$W" # the server's user reaches its folder through it
    if ! pg_cluster_start "$W/pg"; then
        echo "SKIP: $PG_SKIP"
        exit 77
    fi
    export SOLBENCH_DB=$PGURL
fi

case "$PART" in
sqlite | pg)
    "$S" run "${tiny[@]}" >/dev/null && "$S" run "${tiny[@]}" >/dev/null
    [ "$(nruns)" = 2 ] && ok "two runs stored" || fail "two runs: $(nruns) stored"
    "$S" baseline set nightly >/dev/null && "$S" run "${tiny[@]}" >/dev/null &&
        "$S" baseline add nightly last >/dev/null
    "$S" baseline list >"$W/bl"
    grep -Eq '^nightly .* 2 +1( |$)' "$W/bl" && ok "a baseline of two runs" ||
        fail "baseline list: $(tr '\n' '/' <"$W/bl")"
    "$S" run "${tiny[@]}" >/dev/null
    "$S" compare nightly last --threshold 50 >"$W/c" 2>&1; rc=$?
    [ $rc -le 1 ] && grep -q memory.triad "$W/c" && ok "compare a baseline with the last run (exit $rc)" ||
        fail "compare: exit $rc: $(head -5 "$W/c")"
    "$S" run "${tiny[@]}" --threads 1 >/dev/null
    "$S" compare nightly last >"$W/c" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q threads "$W/c" && ok "another thread count refused (like with like)" ||
        fail "compare across thread counts: exit $rc: $(head -3 "$W/c")"
    "$S" check --baseline nightly --threshold 50 --junit "$W/j.xml" >"$W/k" 2>&1; rc=$?
    [ $rc -le 1 ] && [ -s "$W/j.xml" ] && [ "$(nruns)" = 6 ] &&
        ok "check against the baseline (exit $rc), its run stored" ||
        fail "check: exit $rc, $(nruns) runs: $(tail -3 "$W/k")"
    id=$("$S" history --json - | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['run_id'])")
    "$S" compare "${id:0:20}" nightly --threshold 50 >/dev/null 2>&1
    [ $? -le 1 ] && ok "a run id prefix resolves" || fail "prefix ${id:0:20} did not resolve"
    # history: the newest first, a glob of benchmark names, the JSON fields
    "$S" run --quiet --bench memory.read -p size=1MiB --min-time 0.01 --repeat 3 >/dev/null
    n=$("$S" history --bench 'memory.t*' | grep -c '^2')
    [ "$n" = 6 ] && ok "history --bench with a glob: 6 runs" || fail "history --bench 'memory.t*': $n runs"
    "$S" history --json "$W/h.json" --last 2
    python3 - "$W/h.json" <<'PY' && ok "history --json: id, time, fingerprint, commit, figures" || fail "history --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 2, len(d)
r = d[0]
for k in ("run_id", "started_at", "fingerprint", "host", "commit", "results"):
    assert k in r, (k, r.keys())
assert r["results"][0]["bench"] == "memory.read" and r["results"][0]["value"] > 0, r
PY
    # export / import: skipped as it is, refused changed, all or nothing
    "$S" export last --json "$W/a.json" >/dev/null
    "$S" import "$W/a.json" | grep -q "already stored, skipped" && ok "import of a stored run skips it" ||
        fail "import of a stored run"
    python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
d = json.load(open(f"{w}/a.json"))
d.setdefault("tags", {})["note"] = "changed"
json.dump(d, open(f"{w}/changed.json", "w"))
d["run_id"] = "20200101T000000Z-abcdef"
json.dump(d, open(f"{w}/new.json", "w"))
PY
    before=$(nruns)
    "$S" import "$W/new.json" "$W/changed.json" >"$W/i" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q "already stored with other contents" "$W/i" && [ "$(nruns)" = "$before" ] &&
        ok "a changed run under a stored id refused, nothing imported" ||
        fail "import changed: exit $rc, $(nruns) runs (were $before): $(cat "$W/i")"
    "$S" import "$W/new.json" >/dev/null && [ "$(nruns)" = $((before + 1)) ] &&
        ok "a new run imported" || fail "import new.json"
    # a stable mark a later run withdrew is a verdict on the run, not
    # another run: the copies are the same run, and the withdrawal carried
    withdraw() { # IN OUT RUN_ID: result 0 stable, then (OUT) withdrawn
        python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["run_id"] = sys.argv[3]
r = d["results"][0]
r["stable"], r["stability"] = True, []
json.dump(d, open(sys.argv[1] + ".stable", "w"))
r["stable"] = False
r["stability"] = ["withdrawn by run 20200103T000000Z-000001: 12% faster than the point's median"]
json.dump(d, open(sys.argv[2], "w"))
PY
    }
    withdrawn0() { # RUN: result 0's stable mark and reasons, as stored
        "$S" export "$1" --json "$W/x.json" >/dev/null &&
            python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(r['stable'], len(r['stability']))" "$W/x.json"
    }
    withdraw "$W/a.json" "$W/wd.json" 20200102T000000Z-abcdef
    "$S" import "$W/a.json.stable" >/dev/null &&
        "$S" import "$W/wd.json" | grep -q "already stored, skipped" &&
        [ "$(withdrawn0 20200102T000000Z-abcdef)" = "False 1" ] &&
        "$S" import "$W/a.json.stable" | grep -q "already stored, skipped" &&
        [ "$(withdrawn0 20200102T000000Z-abcdef)" = "False 1" ] &&
        ok "a copy with a withdrawn stable mark is the same run: skipped, the withdrawal kept" ||
        fail "withdrawn copy: $(withdrawn0 20200102T000000Z-abcdef)"
    # profiler traces
    printf '{"traceEvents":[{"name":"k","ph":"X","ts":0,"dur":5,"pid":1,"tid":1}]}' >"$W/t.json"
    "$S" trace import "$W/t.json" --name tr1 >/dev/null && "$S" trace list | grep -q '^tr1 .*chrome' &&
        "$S" trace show tr1 >"$W/ts" 2>&1 && ok "a trace stored and read back" ||
        fail "trace: $(cat "$W/ts" 2>/dev/null | head -3)"
    "$S" baseline rm nightly >/dev/null && ! "$S" baseline list | grep -q nightly &&
        ok "baseline removed" || fail "baseline rm"
    ;;
writers)
    "$S" history >/dev/null # the tables, made once
    for w in 1 2 3 4 5 6 7 8; do
        (for r in 1 2 3 4; do "$S" run "${tiny[@]}" --tag "writer=$w" >/dev/null 2>"$W/w$w.$r" ||
            echo "writer $w run $r: exit $?" >>"$W/failed"; done) &
    done
    wait
    [ ! -s "$W/failed" ] && ok "8 writers x 4 runs: none failed" || fail "$(cat "$W/failed") $(cat "$W"/w*.* | head -3)"
    [ "$(nruns)" = 32 ] && ok "32 runs stored" || fail "$(nruns) runs stored, want 32"
    "$S" run "${tiny[@]}" >/dev/null
    [ "$(nruns)" = 33 ] && ok "33 after one more" || fail "$(nruns) after one more"
    ;;
kill)
    whole() { # runs whose results or samples are not all there
        pgq "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM results x
             WHERE x.run_id = r.run_id) <> json_array_length((r.doc::json)->'results')
             OR EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.run_id AND x.n <>
             (SELECT count(*) FROM samples s WHERE s.result_id = x.id))"
    }
    # shellcheck disable=SC2054 # the commas are solbench's lists
    big=(--quiet --bench memory.read,memory.triad,memory.copy -p size=64KiB,256KiB,1MiB,4MiB
         --min-time 0.01 --repeat 20)
    "$S" run "${big[@]}" >/dev/null || fail "a first run"
    for i in $(seq 1 50); do
        "$S" run "${big[@]}" >/dev/null 2>&1 &
        p=$!
        sleep "0.$((RANDOM % 9))$((RANDOM % 10))"
        kill -9 $p 2>/dev/null
        wait $p 2>/dev/null
    done
    stored=$(nruns)
    [ "$(whole)" = 0 ] && ok "50 writers killed: $stored runs stored, every one whole" ||
        fail "$(whole) runs half-written after SIGKILL"
    # the server stopped under a writer: the run kept in a file beside
    # (as when a SQLite commit fails), which imports once the server is back
    cd "$W" || exit 2
    for i in 1 2 3 4 5; do
        "$S" run "${big[@]}" >/dev/null 2>"$W/gone.$i" &
        p=$!
        sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
        pg_cluster_stop
        wait $p; rc=$?
        pg_cluster_up || fail "restart $i"
        kept=$(grep -o 'kept in [^ ]*json' "$W/gone.$i" | head -1 | cut -d' ' -f3)
        if [ -n "$kept" ]; then
            [ $rc -eq 0 ] && grep -q "server went away" "$W/gone.$i" &&
                [ "$(grep -c . "$W/gone.$i")" -le 2 ] && "$S" import "$kept" >/dev/null &&
                ok "server stopped under a writer: the run kept in $kept, imported" ||
                fail "server stopped: exit $rc: $(cat "$W/gone.$i")"
        elif [ $rc -eq 2 ]; then
            [ "$(grep -c . "$W/gone.$i")" -le 2 ] &&
                ok "server stopped under a writer: exit 2: $(tail -1 "$W/gone.$i")" ||
                fail "server stopped: exit 2 with: $(cat "$W/gone.$i")"
        else
            [ $rc -eq 0 ] && ok "server stopped after the writer's commit (exit 0)" ||
                fail "server stopped: exit $rc: $(cat "$W/gone.$i")"
        fi
    done
    [ "$(whole)" = 0 ] && ok "after 5 server stops: every stored run whole" ||
        fail "$(whole) runs half-written after the server stops"
    ;;
import)
    L=$W/lite.db
    for i in 1 2 3; do SOLBENCH_DB=$L "$S" run "${tiny[@]}" >/dev/null; done
    SOLBENCH_DB=$L "$S" baseline set nightly last >/dev/null
    first=$(SOLBENCH_DB=$L "$S" history --json - | python3 -c "import json,sys; print(json.load(sys.stdin)[-1]['run_id'])")
    SOLBENCH_DB=$L "$S" baseline add nightly "$first" >/dev/null
    printf '{"traceEvents":[{"name":"k","ph":"X","ts":0,"dur":5,"pid":1,"tid":1}]}' >"$W/t.json"
    SOLBENCH_DB=$L "$S" trace import "$W/t.json" --name tr1 >/dev/null
    "$S" import "$L" >"$W/o" 2>&1 || fail "import of a SQLite store: $(cat "$W/o")"
    grep -q "3 of 3 runs imported, 1 of 1 baselines, 1 of 1 traces" "$W/o" && ok "$(cat "$W/o")" ||
        fail "first import: $(cat "$W/o")"
    counts() { pgq "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM results),
                    (SELECT count(*) FROM samples), (SELECT count(*) FROM baseline_runs),
                    (SELECT count(*) FROM traces)"; }
    c1=$(counts)
    [ "$(nruns)" = 3 ] && "$S" baseline list | grep -Eq '^nightly .* 2 +1( |$)' &&
        "$S" trace list | grep -q '^tr1 ' && ok "runs, the baseline of two runs and the trace there ($c1)" ||
        fail "after import: $(nruns) runs; $("$S" baseline list)"
    "$S" import "$L" >"$W/o2" 2>&1
    grep -q "0 of 3 runs imported, 0 of 1 baselines, 0 of 1 traces" "$W/o2" && [ "$(counts)" = "$c1" ] &&
        ok "a second import adds nothing" || fail "second import: $(cat "$W/o2"); $(counts) against $c1"
    # fleet records and a fleet baseline (written straight into the
    # source: a fleet run needs several hosts), then a fleet baseline
    # naming another fleet run refuses the import, nothing changed
    fleetsql() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()" "$L" "$1"; }
    fleetsql "INSERT INTO fleets VALUES ('f1','2026-01-01T00:00:00Z','mpirun',2,1,'2026-01-01T00:01:00Z','{\"fleet\":1}');
              INSERT INTO fleets VALUES ('f2','2026-01-02T00:00:00Z','srun',4,0,'2026-01-02T00:01:00Z','{\"fleet\":2}');
              INSERT INTO fleet_baselines VALUES ('fb','f1','2026-01-03T00:00:00Z');"
    fleets() { pgq "SELECT (SELECT string_agg(fleet_id || ':' || hosts || ':' || healthy || ':' || doc, ',' ORDER BY fleet_id) FROM fleets),
                           (SELECT string_agg(name || ':' || fleet_id, ',') FROM fleet_baselines)"; }
    "$S" import "$L" >"$W/of" 2>&1 && grep -q "0 of 3 runs imported, 0 of 1 baselines, 0 of 1 traces, 2 of 2 fleet runs" "$W/of" &&
        [ "$(fleets)" = 'f1:2:1:{"fleet":1},f2:4:0:{"fleet":2}|fb:f1' ] &&
        ok "fleet runs and a fleet baseline imported ($(fleets))" || fail "fleets: $(cat "$W/of"); $(fleets)"
    fleetsql "UPDATE fleet_baselines SET fleet_id = 'f2' WHERE name = 'fb';"
    c0=$(counts)
    "$S" import "$L" >"$W/of" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q "fleet baseline 'fb' is in both stores naming other fleet runs" "$W/of" &&
        [ "$(fleets)" = 'f1:2:1:{"fleet":1},f2:4:0:{"fleet":2}|fb:f1' ] && [ "$(counts)" = "$c0" ] &&
        ok "a fleet baseline naming another fleet run refuses the import, nothing changed" ||
        fail "fleet baseline conflict: exit $rc: $(cat "$W/of"); $(fleets)"
    fleetsql "UPDATE fleet_baselines SET fleet_id = 'f1' WHERE name = 'fb';"
    # a stable mark withdrawn in the source only: carried into the
    # destination, the run not imported twice
    stable0() { "$S" export "$first" --json "$W/x.json" >/dev/null &&
        python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(r['stable'], r['stability'][-1][:16])" "$W/x.json"; }
    SOLBENCH_DB=$L "$S" export "$first" --json "$W/f.json" >/dev/null
    # (only a stable mark is withdrawn: result 0 must have been stable)
    if python3 - "$W/f.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
if r.get("stable") is not True:
    sys.exit(1)
r["stable"] = False
r["stability"].append("withdrawn by run 20200103T000000Z-000001: 9% slower than the point's median")
json.dump(d, open(sys.argv[1], "w"))
PY
    then
        SOLBENCH_DB=$L "$S" import "$W/f.json" >/dev/null &&
            "$S" import "$L" >"$W/o2" 2>&1 && grep -q "0 of 3 runs imported" "$W/o2" &&
            [ "$(stable0)" = "False withdrawn by run" ] &&
            ok "a withdrawn stable mark carried from the source store, the run not imported again" ||
            fail "withdrawal in the source: $(cat "$W/o2"); $(stable0)"
    else
        ok "(the first run's result was not stable: no withdrawal to carry)"
    fi
    "$S" baseline set nightly "$first" >/dev/null # one run now: other runs than the SQLite store's
    "$S" run "${tiny[@]}" >/dev/null
    SOLBENCH_DB=$L "$S" run "${tiny[@]}" >/dev/null
    c2=$(counts)
    "$S" import "$L" >"$W/o3" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q "baseline 'nightly' is in both stores" "$W/o3" && [ "$(counts)" = "$c2" ] &&
        ok "a conflicting baseline refuses the import, nothing changed" ||
        fail "conflict: exit $rc: $(cat "$W/o3"); $(counts) against $c2"
    ;;
*)
    echo "store_drivers.sh: unknown part $PART" >&2
    exit 2
    ;;
esac
[ $FAILS -eq 0 ] || exit 1
