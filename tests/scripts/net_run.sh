#!/usr/bin/env bash
# net_run.sh — runs network benchmarks under an MPI launcher and checks that
# every result validated, none was skipped, every benchmark closed its sweep
# with an alpha-beta fit, and the transport asked for is in the run config.
#
# usage: net_run.sh MPIEXEC NP shm|tcp NFITS SOLBENCH [run arguments...]
# Open MPI: shm is `--mca btl vader,self`, tcp is `--mca btl tcp,self` on
# the loopback interface. MPICH: shm is its default on one host, tcp sets
# MPIR_CVAR_NOLOCAL=1 so ranks on one host talk through the netmod.
set -u
mpiexec=$1 np=$2 transport=$3 nfits=$4 sb=$5
shift 5
args="$*"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

launch=("$mpiexec" -np "$np")
if "$mpiexec" --version 2>&1 | grep -q "Open MPI"; then
    launch+=(--oversubscribe)
    case $transport in
    shm) launch+=(--mca btl vader,self) ;;
    tcp) launch+=(--mca btl tcp,self --mca btl_tcp_if_include lo) ;;
    esac
else
    case $transport in
    tcp) export MPIR_CVAR_NOLOCAL=1 ;;
    esac
fi

"${launch[@]}" "$sb" run --no-store --csv "$dir/r.csv" \
    --json "$dir/r.json" "$@" >"$dir/out" 2>"$dir/err"
rc=$?
fail() {
    echo "FAIL: $*"
    echo "--- command: ${launch[*]} $sb run $args"
    echo "--- stdout"; cat "$dir/out"
    echo "--- stderr"; cat "$dir/err"
    exit 1
}
[ "$rc" -eq 0 ] || fail "exit code $rc"
[ -s "$dir/r.csv" ] || fail "no CSV written"

# CSV columns: run_id,bench,area,backend,params,valid,skipped,...
rows=$(awk -F, 'NR > 1 && $3 == "network"' "$dir/r.csv" | wc -l)
bad=$(awk -F, 'NR > 1 && $3 == "network" && ($6 != "true" || $7 != "false")' \
    "$dir/r.csv" | wc -l)
fits=$(awk -F, 'NR > 1 && $3 == "network" && $5 ~ /size=fit/' "$dir/r.csv" | wc -l)
[ "$rows" -gt "$nfits" ] || fail "only $rows network results"
[ "$bad" -eq 0 ] || fail "$bad network results invalid or skipped"
[ "$fits" -eq "$nfits" ] || fail "$fits alpha-beta fits, expected $nfits"
# Every sized row reports its wrong-element count (0) and a busbw.
grep -q '"wrong"' "$dir/r.json" || fail "no 'wrong' metric in the JSON"
grep -q '"busbw_GBps"' "$dir/r.json" || fail "no busbw in the JSON"
grep -Eq "\"ranks\": *$np\b" "$dir/r.json" || fail "ranks $np not in the config"
grep -q '"alpha_us"' "$dir/r.json" || fail "no alpha_us in the fit results"
case $args in
*link_GBps=*) grep -q '"pct_link"' "$dir/r.json" || fail "link_GBps given, no pct_link" ;;
esac
if [ "$transport" = tcp ] && "$mpiexec" --version 2>&1 | grep -q "Open MPI"; then
    grep -q 'btl=tcp,self' "$dir/r.json" || fail "transport btl=tcp,self not recorded"
fi
echo "ok: $rows network results on $np ranks over $transport, all valid, $fits fits"
