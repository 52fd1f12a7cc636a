#!/usr/bin/env bash
# The baseline flow as a user meets it: a run compared with itself is
# refused with the way on; a kernel or library update still compares (the
# change is named); another machine is refused with `baseline rebase`, and
# rebase carries the name over; a check that cannot compare measures and
# stores nothing and still writes its JUnit report; a baseline made under
# mpirun names the launch to use.
# Usage: baseline_flow.sh SOLBENCH [pg]
#   pg: the same flow on a private PostgreSQL cluster
#       (lib/pg_cluster.sh); exit 77 (skip) when none can be started.
set -u
S=$1
W=$(mktemp -d)
# shellcheck source=tests/scripts/lib/pg_cluster.sh
. "$(dirname "$0")/lib/pg_cluster.sh"
trap 'pg_cluster_stop; rm -rf "$W"' EXIT
export SOLBENCH_DB=$W/r.db
SECOND_DB=$W/m.db
if [ "${2:-}" = pg ]; then
    chmod 755 "$W"
    mkdir "$W/pg"
    pg_cluster_start "$W/pg" || { echo "SKIP: $PG_SKIP"; exit 77; }
    export SOLBENCH_DB=$PGURL
    "${PG_AS[@]}" "$PG_BIN/createdb" -h "$PG_DIR" -U solbench m
    SECOND_DB="postgresql:///m?host=$PG_DIR&user=solbench"
fi
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# runs in the store, through solbench (either driver)
runs() {
    "$S" history --last 0 --json - |
        python3 -c "import json,sys; print(len(json.load(sys.stdin)))"
}
tiny=(--quiet --bench memory.triad -p size=1MiB --min-time 0.01 --repeat 5)

"$S" run "${tiny[@]}" >/dev/null || fail "first run"
"$S" baseline set nightly >/dev/null

# ---- the same run twice
"$S" compare nightly last >"$W/o" 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "same run" "$W/e" && grep -q "check --baseline nightly" "$W/e" &&
    ok "compare of a run with itself refused, with the way on" ||
    fail "compare nightly last: rc $rc: $(cat "$W/e")"

# ---- variants of the stored run: a kernel and library update; another
# machine; a baseline made on 2 MPI ranks
"$S" export nightly --json "$W/a.json" >/dev/null
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
d = json.load(open(f"{w}/a.json"))
s = d["system"]
fp = s["fingerprint_of"]
def save(name, run_id):
    d["run_id"] = run_id
    json.dump(d, open(f"{w}/{name}.json", "w"))
# kernel and oneDNN updated since
s["fingerprint"] = "00000000000000aa"
s["fingerprint_of"] = fp.replace(";kernel=", ";kernel=0.0.1-old")
s["os"]["kernel"] = "0.0.1-old"
d["config"]["software"]["onednn"] = "oneDNN 0.0.1 (OpenMP)"
save("kern", "20200101T000000Z-aaaaaa")
# another CPU
s["fingerprint"] = "00000000000000bb"
s["fingerprint_of"] = fp.replace(";cpu=", ";cpu=Other CPU ")
save("other", "20200101T000000Z-bbbbbb")
# as the first, but on 2 ranks
s["fingerprint"] = json.load(open(f"{w}/a.json"))["system"]["fingerprint"]
s["fingerprint_of"] = fp
d["config"]["topology"]["ranks"] = 2
save("mpi", "20200101T000000Z-cccccc")
PY
"$S" import "$W/kern.json" "$W/other.json" "$W/mpi.json" >/dev/null || fail "import"
"$S" baseline set kern 20200101T000000Z-aaaaaa >/dev/null
"$S" baseline set other 20200101T000000Z-bbbbbb >/dev/null
"$S" baseline set mpi 20200101T000000Z-cccccc >/dev/null

# ---- a kernel update compares, and says what changed
"$S" check --baseline kern --no-confirm >"$W/o" 2>"$W/e"; rc=$?
[ $rc -le 1 ] && grep -q "software changed" "$W/o" &&
    grep -q "system.os.kernel" "$W/o" && grep -q "baseline rebase kern" "$W/o" &&
    ok "kernel and library update: compared, the change named" ||
    fail "check kern: rc $rc: $(cat "$W/o" "$W/e")"

# ---- another machine: refused before measuring, JUnit still written
before=$(runs)
"$S" check --baseline other --junit "$W/j.xml" >"$W/o" 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "baseline rebase other" "$W/e" &&
    grep -q 'fingerprint_of.cpu' "$W/e" && ! grep -q 'clock' "$W/e" &&
    ok "another machine: refused with the rebase way on" ||
    fail "check other: rc $rc: $(cat "$W/e")"
[ "$(runs)" -eq "$before" ] && ok "nothing stored by a refused check" ||
    fail "a refused check stored a run"
xmllint --noout "$W/j.xml" 2>/dev/null && grep -q 'errors="1"' "$W/j.xml" &&
    ok "refused check: JUnit report with the error" || fail "no JUnit on refusal"

# ---- rebase carries the name over; then check compares
"$S" baseline rebase other >"$W/o" 2>"$W/e"; rc=$?
[ $rc -eq 0 ] && grep -q "baseline other rebased" "$W/o" &&
    ok "rebase: the name moved to a new run" || fail "rebase: rc $rc: $(cat "$W/e")"
"$S" check --baseline other --no-confirm >"$W/o" 2>"$W/e"; rc=$?
[ $rc -le 1 ] && grep -q "^check: " "$W/o" && ok "check after rebase compares" ||
    fail "check after rebase: rc $rc: $(cat "$W/e")"
if "$S" baseline rebase nosuch >/dev/null 2>"$W/e"; then
    fail "rebase of an unknown baseline accepted"
else
    ok "rebase of an unknown baseline refused"
fi

# ---- a baseline made on 2 ranks names the launch
before=$(runs)
"$S" check --baseline mpi >"$W/o" 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "mpirun -np 2" "$W/e" && ! grep -q "allow-mismatch" "$W/e" &&
    [ "$(runs)" -eq "$before" ] &&
    ok "2-rank baseline: the mpirun line named, nothing stored" ||
    fail "check mpi: rc $rc: $(cat "$W/e")"

# ---- under mpirun, check says that it does not confirm
if command -v mpirun >/dev/null; then
    export SOLBENCH_DB=$SECOND_DB
    MPI=(mpirun -np 2 --oversubscribe)
    [ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)
    timeout 120 "${MPI[@]}" "$S" run --quiet --bench network.pingpong -p size=8B \
        --min-time 0.01 >/dev/null 2>&1
    "$S" baseline set n2 >/dev/null
    timeout 120 "${MPI[@]}" "$S" check --baseline n2 >"$W/o" 2>"$W/e"; rc=$?
    [ $rc -le 1 ] && grep -q "no confirmation under MPI" "$W/o" &&
        ok "check under mpirun says it does not confirm" ||
        fail "check under mpirun: rc $rc: $(cat "$W/o" "$W/e")"
fi
[ $fails -eq 0 ] && echo "baseline flow: all ok" || { echo "$fails failed"; exit 1; }
