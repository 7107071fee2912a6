#!/usr/bin/env bash
# CI smoke run: builds every suite and runs each benchmark a few times at small sizes
# (VAULTKIT_BENCH_QUICK=1), only to prove they build and run. Asserts no timing; exits
# non-zero only if a build or a benchmark fails. Then prints the instruction-count ratios
# against their targets as a report only (check-ratios.sh --report: a miss never fails CI).
set -euo pipefail
cd "$(dirname "$0")"
export VAULTKIT_BENCH_QUICK=1
swift package --disable-sandbox benchmark --no-progress --format markdown \
    --target Sealing --target Items --target Opening
./check-ratios.sh --report 200
