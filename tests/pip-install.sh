#!/usr/bin/env bash
# Installs the pinned Python tools of each requirements file given (paths from the repository
# root) into the repository's .venv: cargo-lambda for the tests, cfn-lint and the SAM CLI for the
# template lint. Does nothing for a file whose exact content is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
if [ ! -x "$venv/bin/pip" ]; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "tests/pip-install.sh: installing python3-venv"
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
fi
for requirements in "$@"; do
  stamp="$venv/.installed-$(sha256sum "$requirements" | cut -c1-16)"
  if [ ! -e "$stamp" ]; then
    echo "tests/pip-install.sh: installing $requirements into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
    touch "$stamp"
  fi
done
