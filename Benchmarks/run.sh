#!/usr/bin/env bash
# The full run: every suite, markdown results in results/latest.md and a condensed table
# on stdout. Takes about 10 minutes on 2 cores after the first build.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p results
swift package --disable-sandbox benchmark --no-progress --format markdown \
    --target Sealing --target Items --target Opening | tee results/latest.md >/dev/null
./summarize.py results/latest.md
