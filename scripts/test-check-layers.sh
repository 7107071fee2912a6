#!/usr/bin/env bash
# scripts/check-layers.sh must pass on these sources and fail, naming file:line, on each
# kind of violation planted into a copy of them; comments and strings that name a C call
# must not count.
set -euo pipefail
cd "$(dirname "$0")/.."
check=$PWD/scripts/check-layers.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$check" >/dev/null || { echo "test-check-layers: check-layers.sh fails on the sources as they are" >&2; exit 1; }

failures=0
# plant FILE LINE_TEXT EXPECTED: appends LINE_TEXT to FILE in a fresh copy of Sources; the
# check must exit 1 and print FILE:<that line>: followed by EXPECTED.
cases=0
plant() {
    cases=$((cases + 1))
    local file=$1 text=$2 expected=$3
    rm -rf "$work/copy" && mkdir -p "$work/copy" && cp -R Sources "$work/copy/"
    mkdir -p "$work/copy/$(dirname "$file")"
    printf '%s\n' "$text" >>"$work/copy/$file"
    local line status=0
    line=$(wc -l <"$work/copy/$file" | tr -d ' ')
    "$check" "$work/copy" >"$work/out" 2>&1 || status=$?
    if [[ $status -ne 1 ]] || ! grep -qF "$file:$line: $expected" "$work/out"; then
        echo "test-check-layers: planting '$text' in $file gave status $status, expected 1 and '$file:$line: $expected':" >&2
        cat "$work/out" >&2
        failures=$((failures + 1))
    fi
}
# clean FILE LINE_TEXT: the check must still pass with LINE_TEXT appended.
clean() {
    cases=$((cases + 1))
    local file=$1 text=$2 status=0
    rm -rf "$work/copy" && mkdir -p "$work/copy" && cp -R Sources "$work/copy/"
    printf '%s\n' "$text" >>"$work/copy/$file"
    "$check" "$work/copy" >"$work/out" 2>&1 || status=$?
    if [[ $status -ne 0 ]]; then
        echo "test-check-layers: '$text' in $file is no violation, yet the check failed:" >&2
        cat "$work/out" >&2
        failures=$((failures + 1))
    fi
}

plant Sources/VaultKit/Vault/HostWraps.swift 'internal import CSodium' 'import CSodium outside Sources/VaultKit/Crypto/'
plant Sources/VaultKit/Vault/HostWraps.swift 'let n = crypto_box_sealbytes()' 'libsodium call outside Sources/VaultKit/Crypto/'
plant Sources/VaultAuth/TokenStore.swift 'import CSQLite' 'import CSQLite outside Sources/VaultKit/Storage/'
plant Sources/VaultKit/Vault/Vault.swift 'let code = sqlite3_errcode(nil)' 'SQLite call outside Sources/VaultKit/Storage/'
plant Sources/VaultProfile/ProfileStore.swift '@preconcurrency import CLibPQ' 'import CLibPQ outside Sources/VaultKitPostgres/'
plant Sources/vault/VaultCommand.swift 'let c = PQconnectdb(url)' 'libpq call outside Sources/VaultKitPostgres/'
plant Sources/VaultAgent/Server/AgentWipeWatch.swift '@testable import VaultKit' '@testable import in product code'
plant Sources/VaultAgent/Server/AgentServer.swift 'import ArgumentParser' 'VaultAgent and VaultTransfer never import ArgumentParser'
plant Sources/VaultTransfer/TransferFormat.swift 'import ArgumentParser' 'VaultAgent and VaultTransfer never import ArgumentParser'
plant Sources/VaultAgent/Server/AgentServer.swift 'import VaultTransfer' 'VaultAgent imports VaultTransfer'
plant Sources/VaultTransfer/TransferFormat.swift 'import VaultAgent' 'VaultTransfer imports VaultAgent'
plant Sources/VaultProfile/ProfileStore.swift 'import VaultAgent' 'VaultAgent imported outside Sources/vault'
plant Sources/VaultTransfer/Text/JSONReader.swift 'let n = SystemIO.retryingInterrupted { 0 }' "VaultTransfer names VaultKit's package type SystemIO"
plant Sources/VaultAgent/Server/AgentServer.swift 'let storage: (any VaultStorage)? = nil' "VaultAgent names VaultKit's package type VaultStorage"
plant Sources/vault/VaultCommand.swift 'let watch = SecureBufferReleaseWatch.self' 'SecureBufferReleaseWatch outside VaultKit and VaultAgent'
plant Sources/VaultKit/Vault/Vault+Items.swift 'let file = storage as? VaultDatabase' 'downcast to a storage engine type'
plant Sources/VaultConcurrency/Broadcast.swift 'import VaultKit' 'VaultConcurrency imports VaultKit'
plant Sources/git-credential-vault/main.swift 'import VaultKit' 'a credential helper imports VaultKit'
plant Sources/vault/Support/VaultLocation.swift '/// Refuses a libpq connection string.' 'engine name in the CLI'
plant Sources/vault/Commands/BackupCommand.swift 'let help = "copies the vault and its -wal"' 'engine name in the CLI'
plant Sources/vault/Options.swift 'let example = "postgresql://db/app"' 'engine name in the CLI'
clean Sources/vault/Support/StorageEngines.swift '// VaultEngines.register(.sqliteMirror) would go here.'
# A new C module (a directory Sources/C*) with no row in the table fails, named by its directory.
rm -rf "$work/copy" && mkdir -p "$work/copy" && cp -R Sources "$work/copy/" && mkdir "$work/copy/Sources/CNewModule"
status=0 && "$check" "$work/copy" >"$work/out" 2>&1 || status=$?
if [[ $status -ne 1 ]] || ! grep -qF "Sources/CNewModule/: C module CNewModule has no row" "$work/out"; then
    echo "test-check-layers: an unknown C module gave status $status:" >&2; cat "$work/out" >&2
    failures=$((failures + 1))
fi
clean Sources/VaultKit/Vault/HostWraps.swift '/// Seals with `crypto_box_seal` (docs only).'
clean Sources/VaultAgent/Server/AgentServer.swift 'let n = SystemIO.retryingInterrupted { 0 }'
clean Sources/VaultTransfer/TransferFormat.swift '/// Not a `VaultStorage`: a comment.'
clean Sources/VaultKit/Vault/HostWraps.swift 'let note = "sqlite3_open failed" // not a call: sodium_init'
clean Sources/VaultKit/Crypto/Sodium.swift 'let n = crypto_box_sealbytes()'

if [[ $failures -ne 0 ]]; then
    echo "test-check-layers: $failures case(s) failed" >&2
    exit 1
fi
echo "test-check-layers: $((cases + 1)) cases passed"
