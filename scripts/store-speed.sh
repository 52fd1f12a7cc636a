#!/usr/bin/env bash
# store-speed.sh — the store's speed on each driver, on this machine, as
# ratios within one run (never a timed test): a SQLite file against a
# private PostgreSQL cluster (tests/scripts/lib/pg_cluster.sh) started in
# a temporary folder, on a Unix socket.
#   1. storing a run of 500 results (solbench import of one document);
#   2. history --last 100 over 100 stored runs;
#   3. history --last 20 over 10 000 stored runs.
# Targets: 1 and 2 on PostgreSQL within 2x of SQLite; 3 under 100 ms on
# both. Each figure is the median of 5 timings (wall clock, the whole
# command). Usage: scripts/store-speed.sh [SOLBENCH] (default
# build/solbench). Exit 0 when the targets are met, 1 when one is not,
# 2 when no server can be started.
set -u
cd "$(dirname "$0")/.." || exit 2
S=$(realpath "${1:-build/solbench}")
W=$(mktemp -d)
chmod 755 "$W"
# shellcheck source=tests/scripts/lib/pg_cluster.sh
. tests/scripts/lib/pg_cluster.sh
trap 'pg_cluster_stop; rm -rf "$W"' EXIT
mkdir "$W/pg"
pg_cluster_start "$W/pg" || { echo "store-speed.sh: $PG_SKIP" >&2; exit 2; }
LITE=$W/r.db

# one measured run, its result copied into documents of known size
SOLBENCH_DB=$LITE "$S" run --quiet --bench memory.read -p size=1MiB --min-time 0.01 \
    --repeat 20 --json "$W/one.json" --no-store >/dev/null || exit 2
python3 - "$W" <<'PY'
import copy, json, sys
w = sys.argv[1]
d = json.load(open(f"{w}/one.json"))
r0 = d["results"][0]
def doc(run_id, n, day):
    e = copy.deepcopy(d)
    e["run_id"] = run_id
    e["started_at"] = f"2026-01-{day:02d}T00:00:00.000Z"
    e["results"] = []
    for i in range(n):
        r = copy.deepcopy(r0)
        r["params"]["size"] = 1048576 + 64 * i  # a point of its own
        e["results"].append(r)
    return e
json.dump(doc("20260101T000000Z-500000", 500, 1), open(f"{w}/big.json", "w"))
runs = [doc(f"20260102T{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}Z-{i:06x}", 3, 2 + i // 5000)
        for i in range(10000)]
json.dump(runs[:100], open(f"{w}/r100.json", "w"))
for i in range(100):
    json.dump(runs[i], open(f"{w}/h{i}.json", "w"))
for i in range(100, 10000):
    json.dump(runs[i], open(f"{w}/k{i}.json", "w"))
PY

median5() { # command...: median wall seconds of 5 timings
    for _ in 1 2 3 4 5; do
        a=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        b=$(date +%s.%N)
        echo "$b - $a" | bc -l
    done | sort -g | sed -n 3p
}
store_big() { # DB: a fresh store each time, the 500-result run imported
    "$S" import --db "$1" "$W/big.json"
}
ok=0
declare -A T
for drv in sqlite pg; do
    if [ $drv = sqlite ]; then db=$LITE; else db=$PGURL; fi
    big=()
    for _ in 1 2 3 4 5; do
        rm -f "$LITE"*
        [ $drv = pg ] && pgq "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null
        "$S" history --db "$db" >/dev/null # the tables
        a=$(date +%s.%N); store_big "$db" >/dev/null; b=$(date +%s.%N)
        big+=("$(echo "$b - $a" | bc -l)")
    done
    T[$drv.big]=$(printf '%s\n' "${big[@]}" | sort -g | sed -n 3p)
    "$S" import --db "$db" "$W"/h*.json >/dev/null
    T[$drv.h100]=$(median5 "$S" history --db "$db" --last 100)
    # 10 000 runs: the rest in batches of 1000 files an import
    find "$W" -maxdepth 1 -name "k*.json" -print0 | xargs -0 -n 1000 "$S" import --db "$db" >/dev/null
    T[$drv.h20]=$(median5 "$S" history --db "$db" --last 20)
done
printf '%-44s %10s %10s %7s  %s\n' figure sqlite_s pg_s ratio target
row() { # label key target-kind
    s=${T[sqlite.$2]} p=${T[pg.$2]}
    r=$(echo "$p / $s" | bc -l)
    if [ "$3" = ratio ]; then
        met=$(echo "$r <= 2" | bc -l); t="pg <= 2x sqlite"
    else
        met=$(echo "$s < 0.1 && $p < 0.1" | bc -l); t="both < 0.100 s"
    fi
    [ "$met" = 1 ] || ok=1
    printf '%-44s %10.4f %10.4f %7.2f  %s: %s\n' "$1" "$s" "$p" "$r" "$t" \
        "$([ "$met" = 1 ] && echo met || echo MISSED)"
}
row "store a run of 500 results (import)" big ratio
row "history --last 100 (100 runs)" h100 ratio
row "history --last 20 (10 000 runs)" h20 abs
exit $ok
