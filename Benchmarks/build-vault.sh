#!/usr/bin/env bash
# Builds `vault` as README.md tells users to (release, static Swift standard library and
# Foundation: see README.md, "The agent") and prints the binary's path. For the scripts
# that time `vault` processes: VAULT_BIN="$(./build-vault.sh)".
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --product vault --static-swift-stdlib)
swift build "${flags[@]}" >/dev/null
echo "$(swift build "${flags[@]}" --show-bin-path)/vault"
