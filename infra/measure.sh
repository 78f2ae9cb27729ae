#!/usr/bin/env bash
# Measures the Lambda function binaries (figures reported in docs/performance.md):
# - release size, stripped, of the arm64 artifacts that `sam build` deploys (cargo lambda build)
#   and of the host (x86_64) build;
# - cold start of the host build under the `cargo lambda watch` Runtime API emulator: time from
#   process start to the first answered request (infra/measure.py), RUNS times (default 10), with
#   the baked sample and a 1,000-tool manifest; run as root, also under the CPU share of a
#   1,769 MB and a 256 MB function (cgroup v1 CPU quotas).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"

./tests/pip-install.sh tests/requirements.txt
export PATH="$PWD/.venv/bin:$PATH"
target="${CARGO_TARGET_DIR:-target}"

cargo lambda build --release --arm64 --locked -p mcp-core -p mcp-router
cargo build --release --locked -p mcp-core -p mcp-router

size() {
  local bytes
  bytes=$(stat -c %s "$1")
  printf '%s: %s bytes (%s MiB), %s\n' "$2" "$bytes" "$(awk "BEGIN{printf \"%.1f\", $bytes/1048576}")" \
    "$(file -b "$1" | cut -d, -f1,2,5- | tr -s ' ')"
}
for bin in mcp-core mcp-router; do
  size "$target/lambda/$bin/bootstrap" "$bin arm64 (target/lambda/$bin/bootstrap)"
  size "$target/release/$bin" "$bin x86_64 (target/release/$bin)"
done

.venv/bin/python infra/measure.py "$PWD/.venv/bin/cargo-lambda" "$runs" \
  "mcp-core=$target/release/mcp-core" "mcp-router=$target/release/mcp-router"
