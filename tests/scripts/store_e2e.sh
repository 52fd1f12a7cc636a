#!/usr/bin/env bash
# store_e2e.sh SOLBENCH PART — end-to-end tests of the results store and
# the regression gate, against the real tool and a real benchmark.
#   gate:  baseline of memory.triad on all threads; `check` on a quiet
#          machine exits 0 (right after the baseline, so that the load of
#          a shared machine drifts least; one retry with --confirm
#          allowed); `check` while other processes keep every core busy
#          exits 1 and names the point; the JUnit XML is well-formed; runs
#          with another --threads are refused, naming config.threads.
#   crash: SIGKILL in the middle of runs leaves a database that passes
#          PRAGMA integrity_check with every earlier run intact; two runs
#          at once are both stored.
#   io:    export/import round trip without duplicates; export --trace
#          writes a Chrome trace that matches the run; truncated and
#          foreign files given to import or --db exit 2 with a message; a
#          database from a newer solbench is refused; an interleaved
#          baseline is checked interleaved, and --confirm against one made
#          three times faster on paper re-measures all its points in rounds.
#   lock:  a write lock held by another process for ever: read-only
#          commands answer at once, writers give up within
#          SOLBENCH_LOCK_TIMEOUT + 1 s with one line naming the process,
#          before measuring anything; a lock taken during a run makes its
#          commit fail, and the run document is kept in a file that imports.
#   multi: a baseline of several runs (set, add, --update-baseline), the
#          check judged against the spread between them; imports all or
#          nothing; a different run under a stored id refused.
set -u
S=$1
PART=$2
W=$(mktemp -d)
BUSY=()
cleanup() {
    for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
export SOLBENCH_DB=$W/results.db
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
expect_rc() { # expected actual what
    if [ "$1" -eq "$2" ]; then ok "$3 (exit $2)"; else fail "$3: exit $2, expected $1"; fi
}
runs() { sqlite3 "$SOLBENCH_DB" "SELECT count(*) FROM runs"; }

# 8 MiB stays in the last-level cache: on a virtual machine the DRAM
# figure moves by tens of percent between quiet runs a minute apart
# (other guests share the memory), the in-cache figure by a few percent,
# while busy cores still cut it by half or more.
TRIAD=(--bench memory.triad -p size=8MiB --min-time 0.5 --repeat 20)

case "$PART" in
gate)
    "$S" run "${TRIAD[@]}" --quiet --tag image=base >"$W/base.out" 2>&1
    expect_rc 0 $? "baseline run"
    "$S" baseline set base >/dev/null
    expect_rc 0 $? "baseline set"

    # Both checks use a 15 % threshold: wide enough that the drift of a
    # shared virtual machine between two quiet runs is not a regression,
    # far below the slowdown that busy cores cause (about -50 % or more).
    "$S" check --baseline base --threshold 15 --junit "$W/quiet.xml" >"$W/quiet.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        cat "$W/quiet.out"
        echo "retrying the quiet check once with --confirm (shared machine)"
        sleep 2
        "$S" check --baseline base --threshold 15 --confirm >"$W/quiet.out" 2>&1
        rc=$?
    fi
    if [ $rc -ne 0 ]; then
        # The baseline itself can be the outlier: this guest's in-cache
        # triad once ran 4.1 GB/s for the baseline and 2.5-2.8 for the
        # next ten seconds (ASan build, nothing else running here). Take
        # the baseline again, then check once more.
        cat "$W/quiet.out"
        echo "retrying with a new baseline (shared machine)"
        "$S" run "${TRIAD[@]}" --quiet --tag image=base >"$W/base.out" 2>&1 &&
            "$S" baseline set base >/dev/null &&
            "$S" check --baseline base --threshold 15 --confirm >"$W/quiet.out" 2>&1
        rc=$?
    fi
    cat "$W/quiet.out"
    expect_rc 0 $rc "check on a quiet machine"
    xmllint --noout "$W/quiet.xml" && ok "JUnit XML (pass) well-formed" ||
        fail "JUnit XML (pass) not well-formed"

    # Keep every core busy: 6 spinning processes per core take most of the
    # time slices from the benchmark's threads (same config, real slowdown).
    ncpu=$(nproc)
    for _ in $(seq $((6 * ncpu))); do
        (while :; do :; done) &
        BUSY+=($!)
    done
    sleep 0.3
    # The load reaches a sample only when a preemption falls inside it:
    # with samples of about a millisecond and the scheduler's slices of
    # a few, one check in five here saw a clean median (both threads ran
    # on their own cores throughout). Three checks under the same load,
    # the first that sees it counts. Without confirmation: under make
    # test on a kernel-6.18 guest the second re-measurement ran clean
    # (+1.5 %, p 0.68) after two that saw -99.8 %, with or without the
    # pause, in two runs of three, and dropped the regression; spinners
    # slow this process's samples only in some stretches, unlike a slower
    # build. Confirmation itself, a regression that holds and one that
    # does not, is unit.test_gate's.
    for _ in 1 2 3; do
        "$S" check --baseline base --threshold 15 --no-confirm \
            --junit "$W/busy.xml" --markdown "$W/busy.md" >"$W/busy.out" 2>&1
        rc=$?
        [ $rc -ne 0 ] && break
        echo "the load went unseen; checking again under it"
    done
    for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    BUSY=()
    cat "$W/busy.out"
    expect_rc 1 $rc "check under load"
    grep -q "REGRESSED: memory.triad size=" "$W/busy.out" &&
        ok "check names the regressed point" || fail "no REGRESSED line"
    xmllint --noout "$W/busy.xml" && ok "JUnit XML well-formed" ||
        fail "JUnit XML not well-formed"
    grep -q '<failure type="regression" message="regressed: GBps' "$W/busy.xml" &&
        ok "JUnit failure carries the figures" || fail "JUnit failure message"
    grep -q '| memory.triad |' "$W/busy.md" && ok "Markdown table" ||
        fail "Markdown table"

    # Like with like: another thread count is refused, naming the field.
    "$S" run "${TRIAD[@]}" --quiet --threads 1 --min-time 0.05 >/dev/null 2>&1
    "$S" compare base last >"$W/mm.out" 2>"$W/mm.err"
    rc=$?
    cat "$W/mm.err"
    expect_rc 2 $rc "compare of unlike runs"
    grep -q "config.threads: [0-9]* vs 1" "$W/mm.err" &&
        ok "mismatch names config.threads" || fail "mismatch field not listed"
    "$S" compare base last --allow-mismatch >"$W/mm2.out" 2>&1
    expect_rc 0 $? "compare --allow-mismatch"
    grep -q "mismatched" "$W/mm2.out" && ok "lines marked mismatched" ||
        fail "no mismatched mark"
    ;;

crash)
    tiny=(--bench memory.triad -p size=4MiB --min-time 0.02 --repeat 3 --quiet)
    "$S" run "${tiny[@]}" --tag n=1 >/dev/null 2>&1
    "$S" run "${tiny[@]}" --tag n=2 >/dev/null 2>&1
    before=$(runs)
    [ "$before" -eq 2 ] && ok "two runs stored" || fail "stored $before runs"
    "$S" export last --json "$W/before.json" >/dev/null ||
        fail "export before the kills"

    # One long run killed in the middle of its measurement...
    "$S" run --bench memory.triad -p size=64MiB --min-time 5 --quiet \
        >/dev/null 2>&1 &
    pid=$!
    sleep 1.5
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    # ...and short runs killed at staggered moments, so that some die while
    # their run is being written.
    for d in 0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4; do
        "$S" run "${tiny[@]}" >/dev/null 2>&1 &
        pid=$!
        sleep $d
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
    done
    ic=$(sqlite3 "$SOLBENCH_DB" "PRAGMA integrity_check")
    [ "$ic" = "ok" ] && ok "integrity_check after SIGKILLs" ||
        fail "integrity_check: $ic"
    after=$(runs)
    [ "$after" -ge "$before" ] && ok "earlier runs intact ($before -> $after)" ||
        fail "runs lost: $before -> $after"
    # Every stored run is whole: its result rows match its document.
    bad=$(sqlite3 "$SOLBENCH_DB" "SELECT count(*) FROM runs r WHERE
        json_array_length(json_extract(r.doc, '\$.results')) !=
        (SELECT count(*) FROM results x WHERE x.run_id = r.run_id)")
    [ "$bad" -eq 0 ] && ok "no partial run" || fail "$bad partial runs"
    "$S" history --bench memory.triad --last 0 >"$W/hist.out" 2>&1
    expect_rc 0 $? "history after the kills"
    # (a run made in a git work tree carries its commit beside the tag)
    grep -qE "tags \{([^}]*,)?\"n\":\"1\"(,[^}]*)?\}" "$W/hist.out" &&
        ok "first run still listed" ||
        fail "first run missing from history"

    # Two runs at once: both stored (WAL + busy timeout).
    before=$(runs)
    "$S" run "${tiny[@]}" --tag c=1 >/dev/null 2>"$W/c1.err" &
    p1=$!
    "$S" run "${tiny[@]}" --tag c=2 >/dev/null 2>"$W/c2.err" &
    p2=$!
    wait $p1
    r1=$?
    wait $p2
    r2=$?
    cat "$W/c1.err" "$W/c2.err"
    [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && ok "concurrent runs exit 0" ||
        fail "concurrent runs exit $r1 $r2"
    after=$(runs)
    if [ "$after" -eq $((before + 2)) ]; then
        ok "both concurrent runs stored"
    else
        fail "concurrent: $before -> $after"
        sqlite3 "$SOLBENCH_DB" "SELECT run_id, tags, stored_at FROM runs"
    fi

    # Several processes creating the same new database at once.
    bad=0
    for t in 1 2 3 4 5; do
        pids=()
        for i in 1 2 3 4 5 6; do
            "$S" history --db "$W/new$t.db" >/dev/null 2>>"$W/new.err" &
            pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
    done
    cat "$W/new.err"
    [ $bad -eq 0 ] && ok "concurrent creation of a database" ||
        fail "$bad of 30 concurrent opens failed"
    ;;

io)
    tiny=(--bench memory.triad -p size=4MiB --min-time 0.02 --repeat 5 --quiet)
    "$S" run "${tiny[@]}" >/dev/null 2>&1
    "$S" export last --json "$W/r.json" >/dev/null
    expect_rc 0 $? "export"
    id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$W/r.json")
    # Import into another database, twice: one run.
    "$S" import "$W/r.json" --db "$W/other.db" >/dev/null
    expect_rc 0 $? "import"
    "$S" import "$W/r.json" --db "$W/other.db" >"$W/imp2.out"
    expect_rc 0 $? "import again"
    grep -q "already stored" "$W/imp2.out" && ok "second import skipped" ||
        fail "second import not reported as skipped"
    n=$(sqlite3 "$W/other.db" "SELECT count(*) FROM runs WHERE run_id = '$id'")
    [ "$n" -eq 1 ] && ok "no duplicate after two imports" || fail "$n copies"
    # The imported run compares with the original: same samples, unchanged.
    "$S" compare "$id" "$W/r.json" --db "$W/other.db" >"$W/same.out" 2>&1
    expect_rc 0 $? "compare stored run with its JSON"
    grep -q "0 regressed, 0 improved, 1 unchanged" "$W/same.out" &&
        ok "identical runs unchanged" || { cat "$W/same.out"; fail "identical runs"; }

    # The same run as a Chrome trace, beside its document: one slice per
    # sample on the benchmark's track, the metadata naming both.
    "$S" export last --json "$W/r2.json" --trace "$W/t.json" >"$W/tr.out"
    expect_rc 0 $? "export --json and --trace together"
    grep -q "written to $W/t.json as Chrome trace" "$W/tr.out" &&
        ok "export says it wrote the trace" || { cat "$W/tr.out"; fail "export --trace message"; }
    if python3 - "$W/r2.json" "$W/t.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
assert t["displayTimeUnit"] == "ms"
assert t["otherData"]["solbench_run"] == run["run_id"]
assert t["otherData"]["timeline"].startswith("synthetic")
names = {e["args"].get("name") for e in ev if e["ph"] == "M"}
assert "solbench run " + run["run_id"] in names and "memory.triad" in names
x = [e for e in ev if e["ph"] == "X"]
assert len(x) == sum(len(r["samples_s"]) for r in run["results"]), len(x)
for e in x:
    s = run["results"][e["args"]["point"]]["samples_s"][e["args"]["sample"]]
    assert abs(e["dur"] - s * 1e6) <= 1e-6 * s * 1e6, (e, s)
PY
    then ok "the trace reads back: one slice per sample, as long as it"
    else fail "the Chrome trace does not match its run"; fi
    "$S" export last --json "$W/same.json" --trace "$W/same.json" 2>"$W/e0"
    rc=$?
    [ $rc -eq 2 ] && grep -q "name the same file" "$W/e0" && [ ! -e "$W/same.json" ] &&
        ok "--json and --trace on one file refused" || { cat "$W/e0"; fail "one file for --json and --trace: exit $rc"; }
    "$S" export last --trace "$W/nodir/t.json" 2>"$W/e0"
    rc=$?
    [ $rc -eq 2 ] && grep -q "nodir/t.json" "$W/e0" &&
        ok "--trace into a missing folder names it" || { cat "$W/e0"; fail "--trace into a missing folder: exit $rc"; }

    # Bad files given to import: exit 2, a message naming file and place.
    head -c 300 "$W/r.json" >"$W/cut.json"
    "$S" import "$W/cut.json" --db "$W/other.db" 2>"$W/e1"
    rc=$?
    cat "$W/e1"
    expect_rc 2 $rc "import of a truncated file"
    grep -q "cut.json:[0-9]*:[0-9]*" "$W/e1" && ok "message has file:line:column" ||
        fail "truncated-import message"
    echo '{"hello": "world"}' >"$W/foreign.json"
    "$S" import "$W/foreign.json" --db "$W/other.db" 2>"$W/e2"
    rc=$?
    cat "$W/e2"
    expect_rc 2 $rc "import of a foreign JSON file"
    grep -q "foreign.json" "$W/e2" && ok "foreign-import message names the file" ||
        fail "foreign-import message"
    "$S" import /bin/sh --db "$W/other.db" 2>"$W/e3"
    expect_rc 2 $? "import of a binary file"
    # Documents that parse but say wrong things: each refused with one
    # line naming the field, none stored.
    for bad in 'd["started_at"] = "yesterday"' \
               'd["run_id"] = "../../etc/passwd"' \
               'd["run_id"] = "x" * 100' \
               'd["tags"]["who"] = 1' \
               'd["results"][0]["metrics"]["GBps"]["value"] = "fast"' \
               'd["results"][0]["metrics"]["GBps"]["unit"] = 7' \
               'd["results"][0]["notes"] = [1, 2]' \
               'd["results"][0]["samples_s"][0] = -1.0'; do
        python3 - "$W/r.json" "$W/badf.json" "$bad" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["run_id"] = d["run_id"][:-1] + ("0" if d["run_id"][-1] != "0" else "1")
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
        "$S" import "$W/badf.json" --db "$W/other.db" 2>"$W/e5"
        rc=$?
        if [ $rc -eq 2 ] && [ "$(wc -l <"$W/e5")" -eq 1 ] && grep -q 'badf.json: \$\.' "$W/e5"; then
            ok "refused: $bad ($(cat "$W/e5"))"
        else
            cat "$W/e5"; fail "import with $bad: exit $rc"
        fi
    done
    mkdir -p "$W/adir"
    "$S" import "$W/adir" --db "$W/other.db" 2>"$W/e6"
    rc=$?
    [ $rc -eq 2 ] && grep -q "adir: is a directory" "$W/e6" &&
        ok "import of a directory says so" || { cat "$W/e6"; fail "import of a directory"; }
    "$S" import "$W/nope.json" --db "$W/other.db" 2>"$W/e7"
    rc=$?
    [ $rc -eq 2 ] && grep -q "nope.json: No such file" "$W/e7" &&
        ok "import of a missing file says so" || { cat "$W/e7"; fail "import of a missing file"; }
    n=$(sqlite3 "$W/other.db" "SELECT count(*) FROM runs")
    [ "$n" -eq 1 ] && ok "failed imports wrote nothing" || fail "$n runs"

    # Bad files given as --db.
    "$S" history --db "$W/foreign.json" 2>"$W/e4"
    rc=$?
    cat "$W/e4"
    expect_rc 2 $rc "history --db on a JSON file"
    grep -q "foreign.json" "$W/e4" && ok "--db message names the file" ||
        fail "--db message"
    "$S" run "${tiny[@]}" --db "$W/foreign.json" 2>"$W/e5"
    expect_rc 2 $? "run --db on a foreign file"
    cp "$SOLBENCH_DB" "$W/cut.db"
    sqlite3 "$W/cut.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    size=$(stat -c %s "$W/cut.db")
    head -c $((size / 2)) "$W/cut.db" >"$W/half.db"
    "$S" history --db "$W/half.db" 2>"$W/e6"
    rc=$?
    cat "$W/e6"
    expect_rc 2 $rc "history --db on a truncated database"
    sqlite3 "$W/x.db" "CREATE TABLE t(x)"
    "$S" history --db "$W/x.db" 2>"$W/e7"
    rc=$?
    cat "$W/e7"
    expect_rc 2 $rc "history --db on another program's database"
    sqlite3 "$W/cut.db" "PRAGMA user_version = 42"
    "$S" history --db "$W/cut.db" 2>"$W/e8"
    rc=$?
    cat "$W/e8"
    expect_rc 2 $rc "history --db on a newer database"
    grep -q "newer solbench" "$W/e8" && ok "newer database named as such" ||
        fail "newer-database message"

    # An interleaved baseline (config.sampling): check re-runs it
    # interleaved, so the configs match and the points are compared.
    "$S" run --quiet --backend cpu --interleave --bench memory.read,memory.triad -p size=4MiB \
        --repeat 10 --min-time 0.2 >"$W/inter.out" 2>&1
    expect_rc 0 $? "interleaved run"
    "$S" baseline set inter >/dev/null
    "$S" check --baseline inter --threshold 50 --confirm >"$W/inter.out" 2>&1
    rc=$?
    expect_rc 0 $rc "check of an interleaved baseline"
    [ $rc -eq 0 ] || cat "$W/inter.out"
    [ "$(grep -c '^ *memory\.\(read\|triad\) ' "$W/inter.out")" -ge 2 ] &&
        ok "both interleaved points compared" || { cat "$W/inter.out"; fail "points not compared"; }

    # Confirming a regression against an interleaved baseline re-measures
    # the points as they were measured: all of them again, in rounds. The
    # baseline is the one above made three times faster on paper
    # (exported, samples and GB/s scaled, imported under a new id), so the
    # regression is certain whatever the machine does meanwhile.
    "$S" export inter --json "$W/ibase.json" >/dev/null
    expect_rc 0 $? "export of the interleaved baseline"
    python3 - "$W/ibase.json" "$W/ifast.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["run_id"] = d["run_id"] + "-x3"
for r in d["results"]:
    r["samples_s"] = [x / 3 for x in r["samples_s"]]
    for k in ("min", "max", "mean", "p50", "p90", "p99", "stddev"):
        r["stats"][k] /= 3
    for k in ("GBps", "GBps_best"):
        r["metrics"][k]["value"] *= 3
    # every figure as the faster samples give it (import checks them)
    if "latency_us" in r["metrics"]:
        r["metrics"]["latency_us"]["value"] /= 3
json.dump(d, open(sys.argv[2], "w"))
PY
    "$S" import "$W/ifast.json" >/dev/null 2>&1 &&
        "$S" baseline set ibase "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$W/ifast.json")" >/dev/null
    expect_rc 0 $? "three-times-faster baseline imported"
    "$S" check --baseline ibase --threshold 15 --confirm >"$W/ifast.out" 2>&1
    irc=$?
    cat "$W/ifast.out"
    expect_rc 1 $irc "check against the three-times-faster interleaved baseline"
    grep -q "confirming: all 2 points again, interleaved" "$W/ifast.out" &&
        grep -q "confirmed: re-measured" "$W/ifast.out" &&
        ok "confirmed by an interleaved re-run" || fail "no interleaved confirmation"

    # Usage errors.
    "$S" compare last 2>/dev/null
    expect_rc 2 $? "compare with one run"
    "$S" compare last nosuchrun 2>"$W/e9"
    expect_rc 2 $? "compare with an unknown run"
    "$S" check 2>/dev/null
    expect_rc 2 $? "check without --baseline"
    "$S" check --baseline nosuch 2>/dev/null
    expect_rc 2 $? "check with an unknown baseline"
    "$S" baseline rm nosuch 2>/dev/null
    expect_rc 2 $? "baseline rm of an unknown name"
    "$S" compare last last --alpha 2 2>/dev/null
    expect_rc 2 $? "compare --alpha 2"
    ;;
lock)
    TINY=(--bench memory.triad -p size=64KiB --min-time 0.05 --quiet)
    "$S" run "${TINY[@]}" >/dev/null 2>&1
    expect_rc 0 $? "a first run"
    "$S" baseline set held >/dev/null
    # Another process takes the write lock and keeps it (for 60 s).
    python3 - "$SOLBENCH_DB" "$W/locked" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=1)
c.execute("BEGIN IMMEDIATE")
c.execute("UPDATE baselines SET created_at = created_at")
open(sys.argv[2], "w").close()
time.sleep(60)
PY
    BUSY+=($!)
    holder=$!
    for _ in $(seq 100); do [ -e "$W/locked" ] && break; sleep 0.1; done
    [ -e "$W/locked" ] || fail "the locking process did not start"
    t0=$(date +%s.%N)
    "$S" history >"$W/h.out" 2>"$W/h.err"
    expect_rc 0 $? "history beside a held write lock"
    "$S" baseline list >/dev/null 2>&1
    expect_rc 0 $? "baseline list beside a held write lock"
    "$S" export last --json "$W/e.json" >/dev/null 2>&1
    expect_rc 0 $? "export beside a held write lock"
    t1=$(date +%s.%N)
    python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 5 else 1)" &&
        ok "the readers did not wait" || fail "the readers waited $(python3 -c "print($t1 - $t0)") s"
    before=$(sqlite3 "$SOLBENCH_DB" "SELECT count(*) FROM runs" 2>/dev/null)
    t0=$(date +%s.%N)
    SOLBENCH_LOCK_TIMEOUT=2 "$S" run "${TINY[@]}" >"$W/r.out" 2>"$W/r.err"
    rc=$?
    t1=$(date +%s.%N)
    expect_rc 2 $rc "run beside a held write lock"
    python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 3.5 else 1)" &&
        ok "the writer gave up within its timeout" || fail "the writer took $(python3 -c "print($t1 - $t0)") s"
    [ "$(wc -l <"$W/r.err")" -eq 1 ] && grep -q "locked by another process (pid $holder (python3))" "$W/r.err" &&
        ok "one line naming the holder: $(cat "$W/r.err")" || fail "the lock error: $(cat "$W/r.err")"
    grep -q "memory.triad" "$W/r.out" && fail "measured before finding the lock" || ok "nothing measured"
    SOLBENCH_LOCK_TIMEOUT=1 "$S" baseline set other >/dev/null 2>"$W/b.err"
    expect_rc 2 $? "baseline set beside a held write lock"
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    [ "$(sqlite3 "$SOLBENCH_DB" "SELECT count(*) FROM runs")" = "$before" ] &&
        ok "nothing stored while locked" || fail "runs changed while locked"

    # A lock taken while a run measures: its commit gives up, and the run
    # is kept in a file beside the store, which imports afterwards.
    rm -f "$W/locked"
    (sleep 1.2; python3 - "$SOLBENCH_DB" "$W/locked" <<'PY'
import sqlite3, sys, time
# The lock is taken while the run measures; an open that meets the run's
# connection closing (SQLite removing the WAL's side files) is retried, so
# the lock is always taken and the scenario always happens.
for attempt in range(20):
    try:
        c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
        c.execute("BEGIN IMMEDIATE")
        break
    except sqlite3.OperationalError as e:
        if attempt == 19:
            raise
        time.sleep(0.05)
c.execute("UPDATE baselines SET created_at = created_at")
open(sys.argv[2], "w").close()
time.sleep(15)
PY
    ) &
    BUSY+=($!)
    SOLBENCH_LOCK_TIMEOUT=1 "$S" run --bench memory.triad -p size=64KiB --min-time 3 --quiet >"$W/late.out" 2>"$W/late.err"
    expect_rc 0 $? "a run whose commit meets a lock (measured, kept in a file)"
    kept=$(sed -n 's/.*the run was kept in \([^ ]*\) (solbench import.*/\1/p' "$W/late.err")
    [ -n "$kept" ] && [ -f "$kept" ] && ok "kept in $kept" || fail "no kept file: $(cat "$W/late.err")"
    [ "$(wc -l <"$W/late.err")" -eq 1 ] || fail "more than one line: $(cat "$W/late.err")"
    for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
    pkill -f "import sqlite3" 2>/dev/null
    wait 2>/dev/null
    BUSY=()
    if [ -n "$kept" ] && [ -f "$kept" ]; then
        "$S" import "$kept" >/dev/null 2>&1
        expect_rc 0 $? "the kept run imports"
    fi
    ;;
multi)
    TINY=(--bench memory.triad -p size=256KiB --min-time 0.1 --quiet)
    for i in 1 2 3; do "$S" run "${TINY[@]}" --tag n=$i >/dev/null 2>&1; done
    ids=$(sqlite3 "$SOLBENCH_DB" "SELECT run_id FROM runs ORDER BY started_at")
    "$S" baseline set three $ids >"$W/set.out" 2>&1
    expect_rc 0 $? "baseline set of three runs"
    [ "$(grep -o '20[0-9T]*Z-[0-9a-f]*' "$W/set.out" | wc -l)" -eq 3 ] &&
        ok "three runs named" || fail "baseline set said: $(cat "$W/set.out")"
    "$S" baseline list >"$W/list.out"
    grep -q "^three .* 3 " "$W/list.out" && ok "list shows 3 runs" || fail "list: $(cat "$W/list.out")"
    "$S" check --baseline three --threshold 25 --json "$W/c.json" >"$W/c.out" 2>&1
    rc=$?
    [ $rc -le 1 ] || { cat "$W/c.out"; fail "check exited $rc"; }
    grep -q "check against baseline three (3 runs" "$W/c.out" && ok "judged against 3 runs" || fail "$(head -3 "$W/c.out")"
    python3 - "$W/c.json" <<'PY' || fail "no spread in the comparison document"
import json, sys
d = json.load(open(sys.argv[1]))
l = d["lines"][0] if "lines" in d else d["points"][0]
assert l.get("baseline_runs") == 3 and l.get("baseline_spread_pct") is not None, l
PY
    # --update-baseline: a passing check adds its run (keeping --keep)
    "$S" check --baseline three --threshold 200 --update-baseline --keep 3 >"$W/u.out" 2>&1
    expect_rc 0 $? "a generous check with --update-baseline"
    grep -q "run .* added" "$W/u.out" && ok "the new run joined" || fail "$(tail -2 "$W/u.out")"
    [ "$(sqlite3 "$SOLBENCH_DB" "SELECT count(*) FROM baseline_runs WHERE name = 'three'")" = 3 ] &&
        ok "the oldest left (3 kept)" || fail "baseline_runs: $(sqlite3 "$SOLBENCH_DB" "SELECT * FROM baseline_runs")"
    "$S" check --baseline three --no-store --update-baseline >/dev/null 2>&1
    expect_rc 2 $? "--update-baseline with --no-store"
    "$S" baseline add three nosuch 2>/dev/null
    expect_rc 2 $? "baseline add of an unknown run"

    # Import: all or nothing; a different run under a stored id refused.
    "$S" export last --json "$W/last.json" >/dev/null
    python3 - "$W/last.json" "$W/new.json" "$W/lastid.json" "$W/other.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = dict(d); n["run_id"] = "fresh-run-1"; json.dump(n, open(sys.argv[2], "w"))
l = dict(d); l["run_id"] = "last"; json.dump(l, open(sys.argv[3], "w"))
o = json.loads(json.dumps(d)); o["results"][0]["notes"].append("edited elsewhere")
json.dump(o, open(sys.argv[4], "w"))
PY
    before=$(runs)
    "$S" import "$W/new.json" "$W/lastid.json" >/dev/null 2>"$W/i.err"
    expect_rc 2 $? "import with a reserved id among the files"
    [ "$(runs)" = "$before" ] && ok "nothing imported" || fail "import was not all or nothing"
    "$S" import "$W/other.json" >/dev/null 2>"$W/o.err"
    expect_rc 2 $? "import of a different run under a stored id"
    grep -q "already stored with other contents" "$W/o.err" && ok "$(cat "$W/o.err")" || fail "$(cat "$W/o.err")"
    "$S" import "$W/last.json" "$W/new.json" >"$W/ok.out" 2>&1
    expect_rc 0 $? "import of the same run and a new one"
    grep -q "already stored, skipped" "$W/ok.out" && [ "$(runs)" = $((before + 1)) ] &&
        ok "the same run skipped, the new one imported" || fail "$(cat "$W/ok.out")"

    # A database that cannot grow (the file size limit stands in for a
    # full disk): one line naming the cause, and no empty file left. The
    # output goes through a pipe, which the limit does not bind. 2 KiB,
    # not 0: an OpenMP runtime (LLVM's) sizes a 1 KiB shared-memory file
    # as it loads and dies without it; SQLite's first write is a 4 KiB page,
    # so it is cut short, as on a disk that fills mid-write.
    (trap '' XFSZ; ulimit -f 2; "$S" history --db "$W/full.db"; echo "rc=$?") 2>&1 | cat >"$W/full.out"
    grep -q "^rc=2$" "$W/full.out" && grep -q "the file may not grow" "$W/full.out" &&
        [ "$(grep -vc '^rc=' "$W/full.out")" -eq 1 ] &&
        ok "a database that cannot grow: $(head -1 "$W/full.out")" || fail "$(cat "$W/full.out")"
    [ ! -e "$W/full.db" ] && ok "no empty database left" || fail "$(ls -l "$W"/full.db*)"
    ;;
*)
    echo "unknown part $PART"
    exit 2
    ;;
esac

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all checks passed"
