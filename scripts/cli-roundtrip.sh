#!/bin/sh
# Builds the `vault` tool and shows it working in a throwaway vault: init, set, get,
# list, a JSON read, a whole-vault check, a wrong passphrase, a missing item. Exits non-zero if the round
# trip does not give the secret back exactly.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product vault
vault="$(swift build --show-bin-path)/vault"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export VAULT_PATH="$dir/demo.vault"
printf '%s\n' 'correct horse battery staple' > "$dir/passphrase"
chmod 600 "$dir/passphrase"
export VAULT_PASSPHRASE_FILE="$dir/passphrase"

set -x
"$vault" init --kdf interactive
printf '%s\n' 's3cr3t token with spaces' | "$vault" set api.example.com alice --label 'Example API'
got="$("$vault" get api.example.com alice)"
"$vault" list
"$vault" get api.example.com alice --json
"$vault" verify
VAULT_PASSPHRASE_FILE= VAULT_PASSPHRASE=wrong "$vault" list || echo "status $? (wrong passphrase)"
"$vault" get api.example.com bob || echo "status $? (item not found)"
set +x

test "$got" = 's3cr3t token with spaces'
echo "round trip OK"
