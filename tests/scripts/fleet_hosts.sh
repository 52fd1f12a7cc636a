# fleet_hosts.sh — sourced: four test hosts on this machine for `solbench
# fleet` (tests/scripts/fleet_netns.sh, scripts/fleet-rates.sh): network
# namespaces H[0..3], each with its own hostname (unshare --uts) and a
# veth pair onto a bridge; `shape RATE [I SLOW]` puts a tbf on every link
# (host I's at SLOW); a cgroup ($cg, empty when none can be made) holds
# the host named in $FLEET_SLOW_CPU at a 50 % CPU quota; ${mpi[@]} is the
# mpirun that starts one rank in each (an rsh agent running `ip netns
# exec`), $hosts its --host list. Needs $T (a scratch folder) and a skip
# function; fleet_hosts_cleanup removes everything it made.
id=$(printf '%04x' $((RANDOM % 65536)))
br=fb$id
sub=10.$((150 + RANDOM % 50)).$((RANDOM % 250))
H=(fh${id}a fh${id}b fh${id}c fh${id}d)
cg=
fleet_hosts_cleanup() {
    for i in 0 1 2 3; do
        ip netns del "${H[$i]}" 2>/dev/null
        ip link del "v${id}$i" 2>/dev/null
    done
    ip link del "$br" 2>/dev/null
    [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
    rm -rf "$T"
}
trap fleet_hosts_cleanup EXIT

ip link add "$br" type bridge || skip "cannot make a bridge"
ip addr add "$sub.254/24" dev "$br"
ip link set "$br" up
for i in 0 1 2 3; do
    h=${H[$i]}
    ip netns add "$h" || skip "cannot make a network namespace"
    ip link add "v${id}$i" type veth peer name eth0 netns "$h"
    ip link set "v${id}$i" master "$br" up
    ip netns exec "$h" ip addr add "$sub.$((i + 1))/24" dev eth0
    ip netns exec "$h" ip link set eth0 up
    ip netns exec "$h" ip link set lo up
done

# shape: every link at RATE, host $2 (index) at SLOW
shape() {
    for i in 0 1 2 3; do
        r=$1
        [ "$i" = "${2:-x}" ] && r=$3
        tc qdisc replace dev "v${id}$i" root tbf rate "$r" burst 256kb latency 50ms
        ip netns exec "${H[$i]}" tc qdisc replace dev eth0 root tbf rate "$r" burst 256kb latency 50ms
    done
}

# a CPU quota of 50 % for the host named in $FLEET_SLOW_CPU (cgroup v1's
# cpu controller or v2's cpu.max)
if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
    cg=/sys/fs/cgroup/cpu/solbench-fleet-$id
    mkdir "$cg" && echo 100000 >"$cg/cpu.cfs_period_us" &&
        echo 50000 >"$cg/cpu.cfs_quota_us" && procs=tasks || cg=
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cg=/sys/fs/cgroup/solbench-fleet-$id
    mkdir "$cg" && echo "50000 100000" >"$cg/cpu.max" && procs=cgroup.procs || cg=
fi

cat >"$T/agent" <<EOF
#!/bin/sh
h=\$1; shift
[ -n "\${FLEET_SLOW_CPU:-}" ] && [ "\$h" = "\$FLEET_SLOW_CPU" ] && [ -n "$cg" ] && echo \$\$ >"$cg/${procs:-tasks}"
exec ip netns exec "\$h" unshare --uts sh -c 'hostname "\$0"; exec sh -c "\$*"' "\$h" "\$@"
EOF
chmod +x "$T/agent"

hosts="${H[0]}:1,${H[1]}:1,${H[2]}:1,${H[3]}:1"
mpi=(timeout 300 mpirun --allow-run-as-root --mca plm_rsh_agent "$T/agent"
    --mca btl tcp,self --mca btl_tcp_if_include "$sub.0/24"
    --mca oob_tcp_if_include "$sub.0/24" --mca mpi_yield_when_idle 1)
