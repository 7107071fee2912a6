#!/usr/bin/env bash
# The `vault` users install (scripts/build-vault.sh) starts without the shared libraries a
# command would otherwise load and relocate on every run: no shared Swift runtime, no
# Foundation beyond FoundationEssentials (linked in), no libstdc++ on Linux, no libpq
# until a PostgreSQL vault is used. Then that binary does a round trip with a key file.
set -euo pipefail
cd "$(dirname "$0")/.."
vault="$(scripts/build-vault.sh)"

if [[ "$(uname -s)" == Linux ]]; then
    needed="$(readelf -d "$vault" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
    echo "check-release-build.sh: $vault needs: $(tr '\n' ' ' <<<"$needed")"
    refused='^(libswiftCore|libswift_|libdispatch|libFoundation|lib_FoundationICU|libstdc\+\+|libpq)'
    if grep -E "$refused" <<<"$needed"; then
        echo "check-release-build.sh: the release build links the libraries above dynamically" >&2
        exit 1
    fi
fi

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export VAULT_AGENT_SOCKET="$dir/no-agent.sock"
"$vault" init --vault "$dir/check.vault" --key-file "$dir/check.key"
printf '%s\n' 'release s3cr3t' | VAULT_KEY_FILE="$dir/check.key" "$vault" set --vault "$dir/check.vault" api.example.com alice
got="$(VAULT_KEY_FILE="$dir/check.key" "$vault" get --vault "$dir/check.vault" api.example.com alice)"
[[ "$got" == 'release s3cr3t' ]] || { echo "check-release-build.sh: the release build read back something else" >&2; exit 1; }
echo "check-release-build.sh: ok ($("$vault" --version))"
