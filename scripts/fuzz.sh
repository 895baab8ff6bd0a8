#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for N seconds each (default 30), installing
# what it needs first. Owns nothing else: fuzz/README.md documents the targets.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Works on stable Rust: cargo-fuzz needs nightly-only flags (-Zsanitizer,
# sanitizer-coverage), which stable rustc accepts with RUSTC_BOOTSTRAP=1. The
# sanitizer runtimes ship with stable toolchains; if AddressSanitizer cannot
# build or run here, set FUZZ_SANITIZER=none (the parsers are safe Rust, so
# ASan mostly guards the C in dependencies).
#
# Each target's seeds are fuzz/corpus/TARGET/ (committed, read-only here); new
# inputs libFuzzer finds go to fuzz/work/TARGET/ (ignored by git); a crash or
# failed property is written to fuzz/artifacts/TARGET/ and stops the run.
# A summary line per target (runs, exec/s, coverage) ends the output, and the
# script exits non-zero if any target found something.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"
SECONDS_EACH="${1:-30}"
shift || true
SANITIZER="${FUZZ_SANITIZER:-address}"
export RUSTC_BOOTSTRAP=1

log() { printf '[fuzz.sh %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if ! cargo fuzz --version >/dev/null 2>&1; then
    log "cargo install cargo-fuzz --locked"
    cargo install cargo-fuzz --locked
fi

if [ "$#" -gt 0 ]; then
    TARGETS=("$@")
else
    mapfile -t TARGETS < <(cargo fuzz list)
fi

log "building ${#TARGETS[@]} targets (sanitizer: $SANITIZER)"
cargo fuzz build --sanitizer "$SANITIZER"

mkdir -p work artifacts
SUMMARY=()
FAILED=()
for target in "${TARGETS[@]}"; do
    mkdir -p "work/$target" "artifacts/$target"
    log "$target: ${SECONDS_EACH}s"
    logfile="work/$target.log"
    set +e
    cargo fuzz run --sanitizer "$SANITIZER" "$target" "work/$target" "corpus/$target" -- \
        -max_total_time="$SECONDS_EACH" -print_final_stats=1 -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
        2>&1 | tee "$logfile" | grep -E '^(#[0-9]+.*(DONE|pulse)|==[0-9]+==|SUMMARY|thread .* panicked|Test unit written)' >&2
    status="${PIPESTATUS[0]}"
    set -e
    runs="$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$logfile" | grep -oE '[0-9]+$' || echo '?')"
    rate="$(grep -oE '^stat::average_exec_per_sec: *[0-9]+' "$logfile" | grep -oE '[0-9]+$' || echo '?')"
    cov="$(grep -oE 'cov: [0-9]+' "$logfile" | tail -n1 | grep -oE '[0-9]+' || echo '?')"
    if [ "$status" -eq 0 ]; then
        line="$target: ${runs} runs in ${SECONDS_EACH}s, ${rate} exec/s, cov ${cov}"
    else
        line="$target: FOUND a failure after ${runs} runs (${rate} exec/s, cov ${cov}), exit ${status}; see $logfile"
    fi
    SUMMARY+=("$line")
    if [ "$status" -ne 0 ]; then
        FAILED+=("$target")
    fi
done

printf '\n== fuzz summary (%s s per target, sanitizer %s) ==\n' "$SECONDS_EACH" "$SANITIZER"
printf '%s\n' "${SUMMARY[@]}"
if [ "${#FAILED[@]}" -gt 0 ]; then
    printf 'FOUND: %s (inputs in fuzz/artifacts/TARGET/)\n' "${FAILED[*]}"
    exit 1
fi
