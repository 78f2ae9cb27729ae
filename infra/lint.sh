#!/usr/bin/env bash
# Lints the templates: the environment (template.yaml) and the route stack (infra/route.yaml), the
# latter also rendered for two route keys, with cfn-lint and `sam validate --lint`; then
# infra/check_template.py (binaries, MCP_* variables, routes, permissions, imports and exports,
# names shared between stacks, against the workspace). No AWS account needed. First, every
# relative link and heading anchor of the Markdown files (infra/check_links.py).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 infra/check_links.py --self-test
python3 infra/check_links.py

./tests/pip-install.sh infra/requirements.txt
rendered=$(mktemp -d)
trap 'rm -rf "$rendered"' EXIT
# The route template with each rendered key's parameters as defaults (infra/check_template.py
# RENDERED_KEYS), so that the linters see the values of two route stacks side by side.
.venv/bin/python infra/check_template.py render "$rendered" > "$rendered/templates"
mapfile -t routes < "$rendered/templates"

for template in template.yaml infra/route.yaml "${routes[@]}"; do
  echo "infra/lint.sh: $template"
  .venv/bin/cfn-lint "$template"
  SAM_CLI_TELEMETRY=0 .venv/bin/sam validate --lint --template-file "$template"
done
.venv/bin/python infra/check_template.py
