#!/usr/bin/env bash
# Runs the whole test suite: unit tests, contract tests, the end-to-end tests of the local server
# binary and of the Lambda functions under `cargo lambda watch`, and the interop tests with real
# MCP clients and the conformance suite (tests/interop/run.sh). Installs what the tests need and
# the machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v curl >/dev/null 2>&1; then
  echo "tests/run.sh: installing curl (the README walk-through test runs it)"
  apt-get update -qq && apt-get install -y -qq curl >/dev/null
fi
./tests/pip-install.sh tests/requirements.txt
export CARGO_LAMBDA="$PWD/.venv/bin/cargo-lambda"

cargo test --workspace --locked
./tests/interop/run.sh
