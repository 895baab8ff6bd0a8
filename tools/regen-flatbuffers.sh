#!/usr/bin/env bash
# Regenerates the Rust code for proto/*.fbs with flatc built from crates.io only.
#
# flatc comes from the `flatc-fork` crate, which vendors flatc's C++ source at the
# same version as the `flatbuffers` runtime crate (25.12.19) and builds it with
# cmake. Needs: cargo, cmake and a C++ compiler (Debian: apt-get install cmake g++).
# Debian's own flatc is too old for the 25.x runtime crate, so it is not used.
#
# Usage: tools/regen-flatbuffers.sh          # rewrite the generated files
#        tools/regen-flatbuffers.sh --check  # exit 1 if they are out of date
# Set FLATC_BUILD_DIR to reuse a build directory between runs (default: a temp dir).
set -euo pipefail

FLATC_FORK_VERSION="=0.6.0"   # 0.6.0+25.12.19: flatc 25.12.19
repo="$(cd "$(dirname "$0")/.." && pwd)"
out_dir="$repo/src/log/embedded/generated"
check=0
[[ "${1:-}" == "--check" ]] && check=1

command -v cmake >/dev/null || { echo "cmake is required (apt-get install cmake)" >&2; exit 2; }

build_dir="${FLATC_BUILD_DIR:-}"
if [[ -z "$build_dir" ]]; then
  build_dir="$(mktemp -d)"
  trap 'rm -rf "$build_dir"' EXIT
fi
mkdir -p "$build_dir/src"
cat >"$build_dir/Cargo.toml" <<TOML
[package]
name = "flatc-gen"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
flatc-fork = "$FLATC_FORK_VERSION"

[workspace]
TOML
echo 'fn main() { println!("{}", flatc_fork::flatc().display()); }' >"$build_dir/src/main.rs"

flatc="$(cd "$build_dir" && cargo run --release --quiet)"
"$flatc" --version >&2

gen_dir="$(mktemp -d)"
"$flatc" --rust -o "$gen_dir" "$repo/proto/log.fbs"

if [[ $check -eq 1 ]]; then
  diff -u "$out_dir/log_generated.rs" "$gen_dir/log_generated.rs"
  echo "generated code is up to date" >&2
else
  mkdir -p "$out_dir"
  cp "$gen_dir/log_generated.rs" "$out_dir/log_generated.rs"
  echo "wrote $out_dir/log_generated.rs" >&2
fi
rm -rf "$gen_dir"
