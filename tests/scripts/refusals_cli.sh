#!/usr/bin/env bash
# refusals_cli.sh SOLBENCH PART — bad input gets exit code 2 and one line
# on stderr, at once, on every path the tool reads or writes.
#   special: a named pipe (FIFO) with no process at the other end given as
#            every file solbench reads or writes (import, --results, the
#            report outputs, --db, hw and workload files); each must be
#            refused within `timeout 10` with one line naming the path,
#            nothing on stdout and nothing written in the folder; the same
#            for a FIFO with a reader (nothing reaches it), a character
#            device and a socket.
#   dupkeys: a run document with a key given twice (two run_ids) is
#            refused by import, compare, roofline and report --results
#            with path:line:column, and nothing is imported.
#   oneline: control characters in an argument (a newline, an escape
#            sequence) are escaped in the error line, never printed raw;
#            predict --sweep over an unknown key is refused once, before
#            any row.
set -u
S=$1
PART=$2
W=$(mktemp -d)
cleanup() {
    rm -rf "$W"
}
trap cleanup EXIT
export SOLBENCH_DB=$W/unused.db
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
TINY=(--bench memory.triad -p size=64KiB --min-time 0.01)

# The folder's state: every entry with its type and size.
snapshot() { (cd "$W/d" && find . -printf '%p %y %s\n' | sort); }

# refused WORD -- ARGS...: exit 2 within 10 s, one line on stderr that
# contains WORD, nothing on stdout, the folder $W/d unchanged.
refused() {
    local word=$1
    shift 2
    local before after out err rc lines shown
    shown=$(printf '%q ' "$@")
    before=$(snapshot)
    timeout 10 "$S" "$@" >"$W/out" 2>"$W/err"
    rc=$?
    after=$(snapshot)
    out=$(cat "$W/out")
    err=$(cat "$W/err")
    lines=$(grep -c '' "$W/err")
    if [ "$rc" -eq 124 ]; then
        fail "solbench ${shown}hangs (killed after 10 s)"
    elif [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] ||
        ! grep -qF -- "$word" "$W/err"; then
        fail "solbench ${shown}-> rc=$rc, stderr ($lines lines): $err (wanted exit 2 and one line naming $word)"
    elif [ -n "$out" ]; then
        fail "solbench ${shown}printed on stdout before refusing: $out"
    elif [ "$before" != "$after" ]; then
        fail "solbench ${shown}changed the folder: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
    else
        ok "solbench ${shown}-> $err"
    fi
}

# A store with one run and its run document, outside the watched folder.
setup_run() {
    "$S" run "${TINY[@]}" --quiet --db "$W/db" --json "$W/r.json" >/dev/null ||
        { fail "setting up: a tiny run failed"; exit 1; }
    mkdir -p "$W/d"
}

case $PART in
special)
    setup_run
    F=$W/d/fifo
    mkfifo "$F"
    # Read, and blocked for ever before: import, --results.
    refused "$F" -- import "$F" --db "$W/db"
    refused "$F" -- roofline --results "$F"
    refused "$F" -- report --results "$F" -o "$W/d/rep.html"
    refused "$F" -- predict llama3-8b --results "$F"
    # Written, and blocked for ever before. run --json must be refused by
    # the check before measuring (no table on stdout).
    refused "$F" -- run "${TINY[@]}" --no-store --json "$F"
    refused "$F" -- run "${TINY[@]}" --no-store --csv "$F"
    refused "$F" -- compare "$W/r.json" "$W/r.json" --json "$F"
    refused "$F" -- check --baseline none --db "$W/db" --junit "$F"
    refused "$F" -- check --baseline none --db "$W/db" --markdown "$F"
    refused "$F" -- check --baseline none --db "$W/db" --json "$F"
    refused "$F" -- export last --db "$W/db" --json "$F"
    refused "$F" -- roofline --results "$W/r.json" --svg "$F"
    refused "$F" -- roofline --results "$W/r.json" --png "$F"
    refused "$F" -- report --results "$W/r.json" -o "$F"
    refused "$F" -- predict llama3-8b --hw h100-sxm --json "$F"
    refused "$F" -- fleet show "$F"
    refused "$F" -- fleet show "$W/r.json" --html "$F"
    # Refused before too: the store, hardware and workload files, and
    # compare, which looks a name that is not a regular file up as a run.
    refused "$F" -- run "${TINY[@]}" --db "$F"
    refused "$F" -- history --db "$F"
    refused "$F" -- hw show "$F"
    refused "$F" -- roofline --hw "$F"
    refused "$F" -- predict "$F" --hw h100-sxm
    refused "$F" -- report --workload "$F" -o "$W/d/rep.html"
    refused "$F" -- compare "$F" "$W/r.json" --db "$W/db"
    # A FIFO with a reader (this shell holds both ends, so no open
    # blocks): opening it does not block, it is refused all the same, and
    # nothing is written into it.
    exec 3<>"$F"
    refused "$F" -- export last --db "$W/db" --json "$F"
    refused "$F" -- run "${TINY[@]}" --no-store --json "$F"
    got=$(python3 -c '
import os
os.set_blocking(3, False)
try:
    print(len(os.read(3, 65536)))
except BlockingIOError:
    print(0)')
    exec 3<&-
    if [ "$got" = 0 ]; then ok "the FIFO's reader got nothing"; else fail "the FIFO's reader got $got bytes"; fi
    # A character device (read and written) and a socket.
    refused /dev/zero -- import /dev/zero --db "$W/db"
    refused /dev/null -- export last --db "$W/db" --json /dev/null
    refused /dev/null -- run "${TINY[@]}" --no-store --csv /dev/null
    if python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/d/sock" 2>/dev/null; then
        refused "$W/d/sock" -- import "$W/d/sock" --db "$W/db"
        refused "$W/d/sock" -- export last --db "$W/db" --json "$W/d/sock"
    else
        echo "skipped: no AF_UNIX socket here"
    fi
    # A regular file is still written through a symbolic link, and read.
    ln -s "$W/out.json" "$W/d/link.json"
    if "$S" export last --db "$W/db" --json "$W/d/link.json" >/dev/null &&
        "$S" roofline --results "$W/d/link.json" >/dev/null; then
        ok "a symbolic link to a regular file is written and read"
    else
        fail "export/roofline through a symbolic link to a regular file"
    fi
    ;;
dupkeys)
    setup_run
    python3 - "$W/r.json" "$W/d/dup.json" <<'EOF'
import sys
s = open(sys.argv[1]).read()
i = s.index('"run_id"')
open(sys.argv[2], "w").write(s[:i] + '"run_id": "20990101T000000Z-aaaaaa",\n ' + s[i:])
EOF
    D=$W/d/dup.json
    refused "$D:" -- import "$D" --db "$W/d/new.db"
    refused "duplicate object key" -- import "$D" --db "$W/d/new.db"
    refused "$D:" -- compare "$D" "$W/r.json"
    refused "$D:" -- roofline --results "$D"
    refused "$D:" -- report --results "$D" -o "$W/d/rep.html"
    refused "$D:" -- predict llama3-8b --results "$D"
    # the error carries line:column of the second key
    line=$(grep -n '"run_id"' "$D" | sed -n 2p | cut -d: -f1)
    "$S" import "$D" --db "$W/d/new.db" 2>&1 | grep -q "dup.json:$line:[0-9]*: duplicate object key" &&
        ok "the error gives the second key's line ($line)" ||
        fail "no dup.json:$line:column in: $("$S" import "$D" --db "$W/d/new.db" 2>&1)"
    # the same document without the duplicate imports
    "$S" import "$W/r.json" --db "$W/d/new.db" >/dev/null &&
        ok "the document without the duplicate imports" ||
        fail "the document without the duplicate does not import"
    ;;
oneline)
    mkdir -p "$W/d"
    nl=$'\n'
    refused "'KiB\n8KiB' in '4KiB\n8KiB'" -- run --no-store -p "size=4KiB${nl}8KiB"
    refused "'4KiB\n8KiB'" -- run --no-store --bench memory.triad -p "size=4KiB${nl}8KiB"
    refused "'foo\nbar'" -- "foo${nl}bar"
    refused 'foo\x1b[31mbar' -- help $'foo\x1b[31mbar'
    refused 'a\tb' -- run --no-store --bench $'a\tb'
    refused 'x\ry' -- run --no-store --bench memory.triad --json "$W/d/none/x"$'\r'"y"
    refused '\n' -- predict llama3-8b --hw h100-sxm --set "bogus${nl}=1"
    refused '$.bogus: unknown field' -- predict llama3-8b --hw h100-sxm --sweep "bogus.key=1,2"
    refused '--sweep bogus.key' -- predict llama3-8b --hw h100-sxm --sweep "bogus.key=1,2"
    refused '$.job.prompt_len: unknown field' -- predict llama3-8b --hw h100-sxm --sweep "prompt=128,256"
    refused '$.job.global_batch: unknown field' -- predict mixtral-8x7b --sweep "batch=1,2"
    refused 'model.layers is a value' -- predict llama3-8b --hw h100-sxm --sweep "model.layers.x=1,2"
    refused '--sweep bogus:' -- predict llama3-8b --hw h100-sxm --sweep "bogus=1,2" --json "$W/d/p.json"
    # stored fleets: none yet, a bad name, a file that is not a fleet
    refused 'holds no fleet runs yet' -- fleet show --db "$W/d/f.db"
    refused "fleet baseline name '1x'" -- fleet baseline 1x --db "$W/d/f.db"
    refused 'holds no fleet runs yet' -- fleet baseline good --db "$W/d/f.db"
    refused 'holds no fleet runs yet' -- hw calibrate h100-sxm --fleet last --db "$W/d/f.db"
    [ ! -e "$W/d/f.db" ] && ok "no store made by the fleet commands that read" ||
        fail "a fleet command that reads made $W/d/f.db"
    printf '{"schema": "solbench.run/1"}' >"$W/d/notfleet.json"
    refused '$.schema: not a fleet' -- fleet show "$W/d/notfleet.json"
    printf '{"schema": "solbench.fleet/1", "fleet": "x", "hosts": [{"host": "a", "class": "c", "ranks": 1, "metrics": {"m": "1"}}]}' >"$W/d/badfleet.json"
    refused '$.hosts[0].metrics.m: not a number' -- fleet show "$W/d/badfleet.json"
    refused '$.schema: not a fleet' -- hw calibrate h100-sxm --fleet "$W/d/notfleet.json"
    # a known key still sweeps, through an alias or a path
    out=$("$S" predict llama3-8b --hw h100-sxm --sweep tp=1,2 2>&1) &&
        [ "$(printf '%s\n' "$out" | grep -c '^  [12] ')" -eq 2 ] &&
        ok "--sweep tp=1,2 gives two rows" || fail "--sweep tp=1,2: $out"
    out=$("$S" predict llama3-8b --hw h100-sxm --sweep parallelism.tensor=2 2>&1) &&
        ok "--sweep parallelism.tensor=2" || fail "--sweep parallelism.tensor=2: $out"
    ;;
*)
    echo "unknown part $PART"
    exit 2
    ;;
esac
echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
