#!/usr/bin/env bash
# loadgen's scenarios against a Shardline instance joining a cluster (issue 16):
# one etcd (Debian etcd-server), W = Shardline in the Kubernetes storage layout
# standing in for the cluster's kube-apiserver, J = Shardline joining the same
# etcd with --upstream http://W (every write forwarded to W, every read and
# watch served from J's own cache). The same scenarios run against W directly
# as the reference, in the same session, so the ratio J/W is what forwarding
# and the second hop cost.
#
# Usage: benches/system/join.sh OUT_DIR [loadgen --set overrides...]
# Needs: target/release/shardline and target/release/loadgen built with
# `cargo build --release --features etcd -p shardline -p loadgen`, and etcd in PATH.
# Everything listens on 127.0.0.1; every process started here is stopped by PID.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:?usage: join.sh OUT_DIR [--set KEY=VALUE ...]}"
shift
BIN="$ROOT/target/release/shardline"
LOADGEN="$ROOT/target/release/loadgen"
WORK="$(mktemp -d /tmp/shardline-join-XXXXXX)"
PIDS=()
stop() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap stop EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() { # URL PATH
    for _ in $(seq 1 300); do
        curl -sf "$1$2" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "join.sh: $1$2 not ready in 30 s" >&2
    exit 1
}

# A fresh etcd and W (and J when $1 is "joined") for each run, so no run
# inherits another's objects or compaction state.
start_stack() {
    STACK_PIDS=()
    local dir
    dir="$(mktemp -d "$WORK/stack-XXXX")"
    ETCD_CLIENT=$(port) ETCD_PEER=$(port) W_PORT=$(port) J_PORT=$(port)
    etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
        --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
        --initial-cluster "default=http://127.0.0.1:$ETCD_PEER" --quota-backend-bytes 8589934592 \
        >"$dir/etcd.log" 2>&1 &
    STACK_PIDS+=($!)
    PIDS+=($!)
    wait_ready "http://127.0.0.1:$ETCD_CLIENT" /health
    local common=(--log etcd --etcd-endpoints "http://127.0.0.1:$ETCD_CLIENT" --storage-layout kubernetes --shards 1)
    "$BIN" serve "${common[@]}" --listen "127.0.0.1:$W_PORT" >"$dir/w.log" 2>&1 &
    W_PID=$!
    STACK_PIDS+=($!)
    PIDS+=($!)
    wait_ready "http://127.0.0.1:$W_PORT" /readyz
    TARGET_PORT=$W_PORT TARGET_PID=$W_PID
    if [ "$1" = joined ]; then
        "$BIN" serve "${common[@]}" --listen "127.0.0.1:$J_PORT" --upstream "http://127.0.0.1:$W_PORT" \
            >"$dir/j.log" 2>&1 &
        TARGET_PID=$!
        STACK_PIDS+=($!)
        PIDS+=($!)
        wait_ready "http://127.0.0.1:$J_PORT" /readyz
        TARGET_PORT=$J_PORT
    fi
    echo "join.sh: $1: etcd :$ETCD_CLIENT, W :$W_PORT (pid $W_PID), target :$TARGET_PORT (pid $TARGET_PID)"
}
stop_stack() {
    for pid in "${STACK_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${STACK_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
cpu_s() { # PID: user+system seconds so far
    awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14+$15)/hz}' "/proc/$1/stat"
}

mkdir -p "$OUT"
for scenario in kubelets informers; do
    for name in joined writer; do
        start_stack "$name"
        "$LOADGEN" run "$ROOT/loadgen/scenarios/$scenario.toml" --kube "$name=http://127.0.0.1:$TARGET_PORT" \
            --out "$OUT/$scenario-$name" "$@"
        echo "join.sh: $scenario $name: target CPU $(cpu_s "$TARGET_PID") s, W CPU $(cpu_s "$W_PID") s" \
            | tee -a "$OUT/cpu.txt"
        stop_stack
    done
done
