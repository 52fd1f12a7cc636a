# expect.sh — sourced by the CLI test scripts: a scratch folder $T removed
# on exit, ok/bad lines (bad sets fail=1), and
#   expect CODE PATTERN -- command...
# which runs the command and checks its exit code and an extended regular
# expression in its output (stdout and stderr), showing the first lines of
# the output when either is wrong.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

expect() {
    local code=$1 pat=$2
    shift 3
    "$@" >"$T/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$code" ]; then
        bad "$* -> exit $rc, want $code"; sed 's/^/    /' "$T/out" | head -8
    elif ! grep -qE -- "$pat" "$T/out"; then
        bad "$* -> output lacks /$pat/"; sed 's/^/    /' "$T/out" | head -8
    else
        ok "$* (exit $rc, /$pat/)"
    fi
}
