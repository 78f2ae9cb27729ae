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

# The OpenAPI documents `mcp-manifest import openapi` is tested on (infra/mcp-manifest/tests/
# openapi.rs): the npm package pinned by tests/openapi/package-lock.json, installed again only
# when the lock file changed.
openapi_stamp=tests/openapi/node_modules/.package-lock.sha256
openapi_want=$(sha256sum tests/openapi/package-lock.json | cut -d' ' -f1)
if [[ ! -f $openapi_stamp || "$(cat "$openapi_stamp")" != "$openapi_want" ]]; then
  echo "tests/run.sh: installing the OpenAPI test documents from tests/openapi/package-lock.json"
  (cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error)
  echo "$openapi_want" >"$openapi_stamp"
fi

cargo test --workspace --locked
./tests/interop/run.sh
