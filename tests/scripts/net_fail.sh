#!/usr/bin/env bash
# net_fail.sh — runs a command that must fail: checks its exit code (any
# non-zero, or exactly the one given), that stderr+stdout has a pattern,
# and that it ended within a time limit (a hang is the bug it guards).
#
# usage: net_fail.sh CODE|nonzero PATTERN MAX_SECONDS command [args...]
set -u
want=$1 pattern=$2 max_s=$3
shift 3
cmd="$*"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
"$@" >"$out" 2>&1
rc=$?
took=$(($(date +%s) - start))
fail() {
    echo "FAIL: $*"
    echo "--- command: $cmd"
    cat "$out"
    exit 1
}
if [ "$want" = nonzero ]; then
    [ "$rc" -ne 0 ] || fail "exit code 0, expected a failure"
else
    [ "$rc" -eq "$want" ] || fail "exit code $rc, expected $want"
fi
grep -Eq -- "$pattern" "$out" || fail "output lacks /$pattern/"
[ "$took" -le "$max_s" ] || fail "took ${took}s, more than ${max_s}s"
echo "ok: exit $rc in ${took}s, output has /$pattern/"
