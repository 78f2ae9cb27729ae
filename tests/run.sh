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

# The OAuth 2.0 authorization server the oauth2ClientCredentials contract tests get their tokens
# from (tests/contract/outbound_oauth2_server.rs): oidc-provider pinned by
# tests/oauth/package-lock.json, installed again only when the lock file changed.
oauth_stamp=tests/oauth/node_modules/.package-lock.sha256
oauth_want=$(sha256sum tests/oauth/package-lock.json | cut -d' ' -f1)
if [[ ! -f $oauth_stamp || "$(cat "$oauth_stamp")" != "$oauth_want" ]]; then
  echo "tests/run.sh: installing the OAuth authorization server from tests/oauth/package-lock.json"
  (cd tests/oauth && npm ci --no-audit --no-fund --loglevel=error)
  echo "$oauth_want" >"$oauth_stamp"
fi

cargo test --workspace --locked
./tests/interop/run.sh
