#!/usr/bin/env bash
# Reports the Linux settings Shardline depends on (see tuning/README.md). Read-only.
set -u
show() { printf '%-36s %-24s %s\n' "$1" "$2" "$3"; }
sysctl_value() { cat "/proc/sys/$(echo "$1" | tr . /)" 2>/dev/null || echo "n/a"; }
show "setting" "value" "Shardline needs"
show "ulimit -l (memlock, KiB)" "$(ulimit -l)" ">= 1536 per shard at the default --io-memory-bytes"
show "ulimit -n (open files)" "$(ulimit -n)" "one per connection plus log files"
show "ulimit -Hn (hard open files)" "$(ulimit -Hn)" "the soft limit is raised to this at start-up"
show "kernel.io_uring_disabled" "$(sysctl_value kernel.io_uring_disabled)" "0 (n/a on kernels without the knob)"
show "net.core.somaxconn" "$(sysctl_value net.core.somaxconn)" ">= 4096 for reconnect storms"
show "net.ipv4.tcp_max_syn_backlog" "$(sysctl_value net.ipv4.tcp_max_syn_backlog)" ">= 4096"
show "net.ipv4.ip_local_port_range" "$(sysctl_value net.ipv4.ip_local_port_range | tr '\t' ' ')" "wide, for loadgen clients"
show "allowed CPUs" "$(nproc)" "one shard per allowed CPU"
show "kernel" "$(uname -r)" ">= 5.8 for glommio"
