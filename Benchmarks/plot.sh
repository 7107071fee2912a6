#!/usr/bin/env bash
# Draws results/* as the PNG charts next to README.md (plot.py), with matplotlib from
# PyPI in a virtualenv under Benchmarks/.venv (created on first use, gitignored).
# Usage: ./plot.sh
set -euo pipefail
cd "$(dirname "$0")"
if ! .venv/bin/python -c 'import matplotlib' 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check matplotlib
fi
.venv/bin/python plot.py
