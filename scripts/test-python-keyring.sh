#!/usr/bin/env bash
# The Python keyring backend (Integrations/python-keyring-vault) against the built
# `vault` binary: keyring's own BackendBasicTests suite plus the backend's tests.
# Installs keyring and pytest into a virtualenv under .build/ (once), reinstalls the
# backend from its folder with pip each run, and fails on any failed, skipped or
# missing test. Run after `swift build`; scripts/test.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

vault_cli="$(swift build --show-bin-path)/vault"
[[ -x "$vault_cli" ]] || { echo "test-python-keyring: no $vault_cli; run swift build first" >&2; exit 1; }

venv=.build/python-keyring-venv
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import keyring, pytest" 2>/dev/null || "${pip[@]}" install keyring pytest
"${pip[@]}" install --force-reinstall --no-deps ./Integrations/python-keyring-vault

report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
VAULT_CLI="$vault_cli" "$venv/bin/python" -m pytest -q -p no:cacheprovider --junitxml="$report" \
    Integrations/python-keyring-vault/tests || status=$?
# pytest exits 5 when it collected nothing: that is a failure here too.
[[ $status -eq 0 ]] || { echo "test-python-keyring: pytest failed (exit $status)" >&2; exit 1; }
"$venv/bin/python" - "$report" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
tests, skipped = int(suite.get("tests")), int(suite.get("skipped"))
failed = int(suite.get("failures")) + int(suite.get("errors"))
if tests == 0 or skipped or failed:
    sys.exit(f"test-python-keyring: {tests} tests, {failed} failed, {skipped} skipped; every test must run and pass")
print(f"python keyring: {tests} passed, 0 failed")
PY
