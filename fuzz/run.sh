#!/usr/bin/env bash
# Fuzzes the gateway's request pipeline with cargo-fuzz (libFuzzer) for a bounded time.
#
#   fuzz/run.sh [SECONDS]    (default 60)
#
# Installs cargo-fuzz when it is missing. libFuzzer builds need nightly compiler flags
# (-Zsanitizer); on a stable toolchain RUSTC_BOOTSTRAP=1 enables them for this build only.
# Crashes are written to fuzz/artifacts/request_pipeline/.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
mkdir -p corpus/request_pipeline
cargo fuzz run request_pipeline corpus/request_pipeline -- \
  -max_total_time="$seconds" -max_len=4096 -print_final_stats=1
