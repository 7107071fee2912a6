#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what is missing, builds with
# zero warnings allowed in this package's own code, runs every test, then runs the
# benchmark suites in quick mode (only to prove they build and run) and each fuzzer
# for a bounded time, and ends with the test count.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test

# The tests' files stay after a run, for inspecting a failure (Tests/TestSupport/TestPaths.swift,
# Unprivileged.swift); those more than a day old go, so /tmp does not grow with every run.
tests_tmp="${TMPDIR:-/tmp}/vaultkit-tests"
# (One that cannot be removed is left: it never stops the run.)
if [[ -d "$tests_tmp" ]]; then find "$tests_tmp" -mindepth 1 -maxdepth 1 -mmin +1440 -exec rm -rf {} + || true; fi
find /tmp -maxdepth 1 -name 'vaultkit-unprivileged-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true

log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$PWD/(Sources|Tests|Examples)/.*: warning:" "$log" >/dev/null; then
    echo "test.sh: the build has warnings in VaultKit's own code:" >&2
    grep -E "^$PWD/(Sources|Tests|Examples)/.*: warning:" "$log" | sort -u >&2
    exit 1
fi

# A throwaway PostgreSQL server for the VaultKitPostgres tests (their URL and PGPASSFILE
# in the environment), with a hot standby streaming from it (PostgresStandbyTests),
# stopped on any exit.
postgres_env=$(VAULTKIT_TEST_POSTGRES_STANDBY=1 scripts/postgres-test-cluster.sh start)  # a failed start stops the run here
eval "$postgres_env"
trap 'scripts/postgres-test-cluster.sh stop "$VAULTKIT_TEST_POSTGRES_DIR"; rm -f "$log"' EXIT

# Every suite uses Swift Testing; XCTest would only report "Executed 0 tests".
# One process: the suites whose tests block their thread on child processes and disk
# syncs run off the cooperative pool (Tests/TestTraits, `.offCooperativePool`), so the
# suites that wait on timers, servers and debounced writes are not starved beside them.
swift test --skip-build --disable-xctest 2>&1 | tee "$log"
summary=$(grep -E "Test run with [0-9]+ tests? .*(passed|failed)" "$log" | tail -1)
[[ -n "$summary" ]] || { echo "test.sh: no test summary from swift test" >&2; exit 1; }
total=$(sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
scripts/test-python-keyring.sh

# `vault secret-service` against secret-tool, SecretStorage's and keyring's own suites.
scripts/test-secret-service.sh

# git's own credential-helper test (t0303) against git-credential-vault and the installed git.
scripts/test-git-credential.sh

# A package using only the VaultKit product, traits off, resolves no remote package (docs/DEPENDENCIES.md).
scripts/check-core-dependencies.sh

# The `vault` users install (scripts/build-vault.sh) links no shared Swift runtime, Foundation
# or libstdc++, and does a round trip.
scripts/check-release-build.sh

# The DocC catalogs (VaultKit, VaultAuth, VaultProfile) build without a warning: every link resolves.
scripts/check-docs.sh

# The layer table of docs/ARCHITECTURE.md holds over Sources (C modules, libsodium, SQLite and
# libpq calls, no @testable import, no downcast to a storage engine); its own test first.
scripts/test-check-layers.sh
scripts/check-layers.sh

if [[ -x Benchmarks/run-quick.sh ]]; then
    Benchmarks/run-quick.sh
fi

# libFuzzer targets (record decoder, whole vault files), bounded; VAULTKIT_FUZZ_SECONDS for longer runs.
Fuzz/run.sh "${VAULTKIT_FUZZ_SECONDS:-30}"

# The swift test count again, last, in the plain form CI tools read.
echo "tests: $total passed, 0 failed"
