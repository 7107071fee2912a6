#!/usr/bin/env bash
# Builds `vault` as README.md tells users to (scripts/build-vault.sh: release, static Swift
# runtime and, on Linux, static libstdc++) and prints the binary's path. For the scripts
# that time `vault` processes: VAULT_BIN="$(./build-vault.sh)".
set -euo pipefail
exec "$(dirname "$0")/../scripts/build-vault.sh" "$@"
