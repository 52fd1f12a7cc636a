#!/usr/bin/env bash
# history_changes.sh — `solbench history --changes` on stores of known
# series: one run measured here is the template, and copies of it with set
# headline figures are imported in time order (the detector's statistics
# are unit.test_changepoint; this is the store, the series and the CLI).
#   a step: 12 runs near 100 GB/s, then 12 near 90 (a 10 % regression):
#     exactly one change point, at the 13th run, -15 to -5 %, a REGRESSION;
#   the same step upwards: an improvement;
#   flat: 24 runs near 100: none;
#   bad options: one line, exit 2.
# Usage: history_changes.sh path/to/solbench [pg]
#   pg: every store a database of a private PostgreSQL cluster
#       (lib/pg_cluster.sh); exit 77 (skip) when none can be started.
sb=${1:?usage: history_changes.sh path/to/solbench [pg]}
. "$(dirname "$0")/expect.sh"
# shellcheck source=tests/scripts/lib/pg_cluster.sh
. "$(dirname "$0")/lib/pg_cluster.sh"
trap 'pg_cluster_stop; rm -rf "$T"' EXIT
PG=
if [ "${2:-}" = pg ]; then
    chmod 755 "$T"
    mkdir "$T/pg"
    pg_cluster_start "$T/pg" || { echo "SKIP: $PG_SKIP"; exit 77; }
    PG=1
fi
# store NAME: the store called NAME, a file, or a database (made once)
store() {
    if [ -z "$PG" ]; then
        echo "$T/$1.db"
        return
    fi
    "${PG_AS[@]}" "$PG_BIN/createdb" -h "$PG_DIR" -U solbench "$1" 2>/dev/null
    echo "postgresql:///$1?host=$PG_DIR&user=solbench"
}

SOLBENCH_DB=$(store t)
export SOLBENCH_DB
"$sb" run --quiet --bench memory.read -p size=64KiB --min-time 0.01 \
    --repeat 3 >/dev/null 2>&1 || { bad "the template run"; exit 1; }
"$sb" export last --json "$T/one.json" >/dev/null || { bad "export"; exit 1; }

# make DB LEVEL...: one run a level, each started a minute after the last,
# its headline (GBps) the level times a fixed +-2 % wobble.
make() {
    local db=$1
    shift
    python3 - "$T/one.json" "$T/docs" "$(dirname "$0")" "$@" <<'PY' || return 1
import json, os, sys
tpl, out, here = sys.argv[1:4]
levels = [float(v) for v in sys.argv[4:]]
sys.path.insert(0, here)
from series_docs import run_at, scale
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    os.remove(os.path.join(out, f))
for i, lv in enumerate(levels):
    d = run_at(tpl, i)
    scale(d["results"][0], lv, i)
    json.dump(d, open(os.path.join(out, "%03d.json" % i), "w"))
PY
    for f in "$T"/docs/*.json; do
        "$sb" import --db "$db" "$f" >/dev/null || return 1
    done
}

# check DB WANT_N [INDEX LO HI DIRECTION]: the JSON's changes
check() {
    "$sb" history --changes --db "$1" --json "$T/c.json" || return 1
    python3 - "$T/c.json" "${@:2}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
ch = d["changes"]
assert d["schema"] == "solbench.changes/1" and d["series"] == 1, d
assert len(ch) == want, (want, ch)
if want:
    c = ch[0]
    idx, lo, hi, dirn = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
    assert abs(c["index"] - idx) <= 1, c
    assert lo <= c["change_pct"] <= hi, c
    assert c["direction"] == dirn and c["p"] <= 0.05, c
    assert c["run"]["commit"] == "c%03d" % c["index"], c
    assert c["point"]["bench"] == "memory.read" and c["runs"] == 24, c
PY
}

step=$(python3 -c "print(' '.join(['100']*12 + ['90']*12))")
up=$(python3 -c "print(' '.join(['90']*12 + ['100']*12))")
flat=$(python3 -c "print(' '.join(['100']*24))")

if make "$(store step)" $step && check "$(store step)" 1 12 -15 -5 regression; then
    ok "a 10 % step down: one change point at run 13, a regression"
else
    bad "a 10 % step down"
fi
expect 0 'REGRESSION' -- "$sb" history --changes --db "$(store step)"
if make "$(store up)" $up && check "$(store up)" 1 12 5 15 improvement; then
    ok "a step up: an improvement"
else
    bad "a step up"
fi
if make "$(store flat)" $flat && check "$(store flat)" 0; then
    ok "a flat series: no change point"
else
    bad "a flat series"
fi
expect 0 '^0 change points' -- "$sb" history --changes --db "$(store flat)"
# check --history: the new run measured here ends each series. Levels
# relative to the template's own figure V: 12 runs at 2V then 6 at V, and
# the new run near V, is a step among the last 10 runs: exit 1; 18 runs
# at V and the new one is flat: exit 0 (one run alone is never a segment).
V=$(python3 -c "import json; print(json.load(open('$T/one.json'))['results'][0]['metrics']['GBps']['value'])")
drop=$(python3 -c "print(' '.join([str(2*$V)]*12 + [str($V)]*6))")
same=$(python3 -c "print(' '.join([str($V)]*18))")
first=20260101T000000Z-000000
if make "$(store hdrop)" $drop && "$sb" baseline set b "$first" --db "$(store hdrop)" >/dev/null; then
    expect 1 'REGRESSED \(history\): memory.read .*\(-(4[5-9]|5[0-5])\.' -- \
        "$sb" check --baseline b --history --no-confirm --db "$(store hdrop)"
else
    bad "the dropped store"
fi
if make "$(store hsame)" $same && "$sb" baseline set b "$first" --db "$(store hsame)" >/dev/null; then
    expect 0 'check --history: PASS \(1 point, 0 regressed' -- \
        "$sb" check --baseline b --history --db "$(store hsame)"
else
    bad "the flat store"
fi
expect 2 'history.*5' -- \
    "$sb" check --baseline b --history 3 --db "$(store hsame)"
expect 2 'history judges the stored series' -- \
    "$sb" check --baseline b --history --no-store --db "$(store hsame)"
expect 2 'alpha' -- "$sb" history --changes --db "$(store flat)" --alpha 2
expect 2 'min-size' -- "$sb" history --changes --db "$(store flat)" --min-size 0
expect 2 'choose one' -- "$sb" history --changes --verbose --db "$(store flat)"
exit $fail
