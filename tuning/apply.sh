#!/usr/bin/env bash
# Sets the recommended values of tuning/check.sh's runtime knobs. Dry-run by default: prints
# what it would change and the command that undoes each change. `--apply` changes them (root).
# Nothing persists across a reboot (no /etc/sysctl.d file is written). Limits (ulimit),
# isolcpus, SMT and IRQ affinity need boot or service configuration: see tuning/README.md.
set -u
apply=0
[ "${1:-}" = "--apply" ] && apply=1
[ "$apply" -eq 1 ] && [ "$(id -u)" -ne 0 ] && { echo "apply.sh --apply needs root" >&2; exit 1; }
undo=()

set_file() { # path value description
    local path="$1" want="$2" what="$3" cur
    [ -w "$path" ] || [ "$apply" -eq 0 ] || { echo "skip $what: $path not writable"; return; }
    cur="$(cat "$path" 2>/dev/null | tr '\t' ' ')" || { echo "skip $what: $path missing"; return; }
    # THP-style files show "[selected]" among choices.
    case "$cur" in *"[$want]"*) echo "ok   $what = $want"; return;; esac
    [ "$cur" = "$want" ] && { echo "ok   $what = $want"; return; }
    local old="$cur"
    case "$cur" in *"["*"]"*) old="$(echo "$cur" | sed -E 's/.*\[([^]]*)\].*/\1/')";; esac
    if [ "$apply" -eq 1 ]; then
        echo "$want" > "$path" && echo "set  $what: $old -> $want"
    else
        echo "would set $what: $old -> $want"
    fi
    undo+=("echo '$old' > $path")
}
set_sysctl() { set_file "/proc/sys/$(echo "$1" | tr . /)" "$2" "$1"; }

set_sysctl net.core.somaxconn 4096
set_sysctl net.ipv4.tcp_max_syn_backlog 4096
set_sysctl net.ipv4.ip_local_port_range "1024 65535"
set_sysctl net.ipv4.tcp_tw_reuse 1
# Buffers: only ever raised, never lowered.
at_least() { local cur; cur="$(cat "/proc/sys/$(echo "$1" | tr . /)" 2>/dev/null || echo 0)"; [ "$cur" -ge "$2" ] && echo "$cur" || echo "$2"; }
set_sysctl net.core.rmem_max "$(at_least net.core.rmem_max 16777216)"
set_sysctl net.core.wmem_max "$(at_least net.core.wmem_max 16777216)"
for k in net.ipv4.tcp_rmem net.ipv4.tcp_wmem; do
    read -r lo def hi < "/proc/sys/$(echo "$k" | tr . /)" 2>/dev/null || continue
    [ "$def" -lt 131072 ] && def=131072
    [ "$hi" -lt 16777216 ] && hi=16777216
    set_sysctl "$k" "$lo $def $hi"
done
for gov in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do
    [ -e "$gov" ] && set_file "$gov" performance "governor $(echo "$gov" | cut -d/ -f6)"
done
[ -e /sys/kernel/mm/transparent_hugepage/enabled ] && set_file /sys/kernel/mm/transparent_hugepage/enabled madvise "transparent huge pages"

if [ "${#undo[@]}" -gt 0 ]; then
    echo
    echo "to undo$([ "$apply" -eq 0 ] && echo ' (after --apply)'), run as root:"
    printf '  %s\n' "${undo[@]}"
fi
[ "$apply" -eq 0 ] && echo && echo "dry run: nothing changed (pass --apply to change)"
exit 0
