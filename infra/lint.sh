#!/usr/bin/env bash
# Lints template.yaml: cfn-lint, `sam validate --lint`, then infra/check_template.py (binaries,
# MCP_* variables, routes, permissions and outputs against the workspace). No AWS account needed.
set -euo pipefail
cd "$(dirname "$0")/.."

./tests/pip-install.sh infra/requirements.txt
.venv/bin/cfn-lint template.yaml
SAM_CLI_TELEMETRY=0 .venv/bin/sam validate --lint --template-file template.yaml
.venv/bin/python infra/check_template.py
