#!/usr/bin/env bash
# Reports, without changing anything, every Linux setting that affects Shardline (and loadgen)
# on this machine: its current value, the recommended value, and why. See tuning/README.md for
# each knob and how to verify that changing it helped. tuning/apply.sh changes them on request.
set -u
show() { printf '%-34s %-28s %-22s %s\n' "$1" "$2" "$3" "$4"; }
sysctl_value() { local v; v="$(cat "/proc/sys/$(echo "$1" | tr . /)" 2>/dev/null)" || v="n/a"; echo "$v" | tr '\t' ' '; }
read_or() { cat "$1" 2>/dev/null || echo "$2"; }

show "setting" "current" "recommended" "why"
show "kernel" "$(uname -r)" ">= 5.8" "glommio needs io_uring features of 5.8+"
if [ -r /proc/sys/kernel/io_uring_disabled ]; then uring="$(sysctl_value kernel.io_uring_disabled)"; else uring="n/a (always on)"; fi
show "kernel.io_uring_disabled" "$uring" "0" "1/2 stop the shards' executors from starting"
show "ulimit -l (memlock, KiB)" "$(ulimit -l)" ">= 1536 per shard" "registered io_uring buffers (--io-memory-bytes, 3 rings)"
show "ulimit -n (soft open files)" "$(ulimit -n)" "= hard limit" "one per connection; raised at start-up"
show "ulimit -Hn (hard open files)" "$(ulimit -Hn)" ">= 20000" "10,000 connections per shard by default"
show "net.core.somaxconn" "$(sysctl_value net.core.somaxconn)" ">= 4096" "accept backlog for reconnect storms"
show "net.ipv4.tcp_max_syn_backlog" "$(sysctl_value net.ipv4.tcp_max_syn_backlog)" ">= 4096" "half-open connections during storms"
show "net.ipv4.ip_local_port_range" "$(sysctl_value net.ipv4.ip_local_port_range)" "1024 65535" "ephemeral ports for loadgen's HTTP/1.1 watches"
show "net.ipv4.tcp_tw_reuse" "$(sysctl_value net.ipv4.tcp_tw_reuse)" "1" "reuse TIME_WAIT ports for new client connections"
show "net.core.rmem_max" "$(sysctl_value net.core.rmem_max)" ">= 16777216" "cap on socket receive buffers"
show "net.core.wmem_max" "$(sysctl_value net.core.wmem_max)" ">= 16777216" "cap on socket send buffers (large lists)"
show "net.ipv4.tcp_rmem" "$(sysctl_value net.ipv4.tcp_rmem)" "4096 131072 16777216" "autotuned receive buffer range"
show "net.ipv4.tcp_wmem" "$(sysctl_value net.ipv4.tcp_wmem)" "4096 131072 16777216" "autotuned send buffer range"
gov="$(read_or /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 'n/a (no cpufreq)')"
show "CPU governor (cpu0)" "$gov" "performance" "no frequency ramp-up on bursts"
freq="$(read_or /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq 'n/a')"
[ "$freq" != "n/a" ] && freq="$((freq / 1000)) MHz"
show "CPU frequency (cpu0)" "$freq" "at max" "latency varies with frequency"
show "SMT" "$(read_or /sys/devices/system/cpu/smt/control 'n/a')" "off, or shards on distinct cores" "sibling threads share a core's caches"
show "allowed CPUs" "$(nproc) ($(grep Cpus_allowed_list /proc/self/status | awk '{print $2}'))" "one shard each" "--shards defaults to the allowed CPUs"
iso="$(read_or /sys/devices/system/cpu/isolated '')"
show "isolated CPUs (isolcpus)" "${iso:-none}" "the shards' CPUs" "keeps other tasks off the shards"
nics=""
for dev in /sys/class/net/*; do
    name="$(basename "$dev")"
    [ "$name" = lo ] && continue
    [ -e "$dev/device" ] || continue
    irqs="$(grep -E "[[:space:]]${name}(-|\$)" /proc/interrupts 2>/dev/null | awk -F: '{gsub(/ /,"",$1); print $1}' | tr '\n' ' ')"
    aff=""
    for irq in $irqs; do aff="$aff$irq->$(read_or "/proc/irq/$irq/smp_affinity_list" '?') "; done
    nics="$nics$name[${aff:-no IRQs listed}] "
done
show "NIC IRQ affinity" "${nics:-no physical NIC}" "off the shards' CPUs" "interrupts steal time from a shard"
show "transparent huge pages" "$(read_or /sys/kernel/mm/transparent_hugepage/enabled 'n/a')" "madvise" "'always' can stall on compaction"
nodes="$(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)"
show "NUMA nodes" "$nodes" "shards on one node" "cross-node memory is slower"
