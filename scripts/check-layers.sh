#!/usr/bin/env bash
# The layer table of docs/ARCHITECTURE.md ("Who may call whom"), checked over the Swift
# sources: which directories may import each C module and call into it, that no product
# code imports a module `@testable`, that the engine asks storage for a capability
# instead of downcasting to an engine's type, what VaultAgent and VaultTransfer may
# import and name, and that the CLI and the agent name no storage engine. Prints each
# violation as file:line: rule, and exits 1 if there is any. The rules on code skip
# comments and string literals; the engine-word rule does not (help texts are strings).
#
# Usage: scripts/check-layers.sh [root]   (root: the package directory, this one by default)
# Keep the rules here and the table in docs/ARCHITECTURE.md saying the same thing.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"
[[ -d Sources ]] || { echo "check-layers: no Sources directory in $root" >&2; exit 2; }

# Each C module (a directory Sources/C*) and the only source directory that may import it.
# A C module missing here is itself a violation: the table must say who may use it.
declare -A c_module_home=(
    [CSodium]=Sources/VaultKit/Crypto/
    [CSQLite]=Sources/VaultKit/Storage/
    [CLibPQ]=Sources/VaultKitPostgres/
    [CLibPQLoader]=Sources/VaultKitPostgres/
    [CSecretService]=Sources/VaultSecretService/
    [CVaultCLI]=Sources/vault/
)

status=0
for dir in Sources/C*/; do
    module=$(basename "$dir")
    if [[ -z "${c_module_home[$module]:-}" ]]; then
        echo "$dir: C module $module has no row in the layer table (scripts/check-layers.sh, docs/ARCHITECTURE.md)"
        status=1
    fi
done

homes=""
for module in "${!c_module_home[@]}"; do homes+="$module=${c_module_home[$module]};"; done

# VaultKit's top-level `package` types (the storage seam, SystemIO, ...): VaultTransfer,
# a product on the public API, names none of them; VaultAgent only those its row allows.
package_types=$(grep -rhoE '^(@[A-Za-z]+ +)*package +((final|indirect) +)?(struct|enum|class|protocol|actor|typealias) +[A-Za-z_][A-Za-z0-9_]*' Sources/VaultKit 2>/dev/null | awk '{print $NF}' | sort -u | tr '\n' ' ')
agent_allowed="SystemIO SecureBufferReleaseWatch"

# awk prints "file:line: rule" per violation. Per line: multi-line string literals (""")
# and /* */ comments that start a line are skipped through their end, then string
# literals and // comments are removed.
find Sources -name '*.swift' -print0 | sort -z | xargs -0 awk -v homes="$homes" -v package_types="$package_types" -v agent_allowed="$agent_allowed" '
function under(dir) { return index(FILENAME, dir) == 1 }
function report(rule) { print FILENAME ":" FNR ": " rule; found = 1 }
BEGIN {
    n = split(homes, pairs, ";")
    for (i = 1; i <= n; i++) if (pairs[i] != "") { split(pairs[i], kv, "="); home[kv[1]] = kv[2] }
    n = split(package_types, names, " ")
    for (i = 1; i <= n; i++) packageType[names[i]] = 1
    n = split(agent_allowed, names, " ")
    for (i = 1; i <= n; i++) agentAllowed[names[i]] = 1
}
function imports(module) { return line ~ ("^[ \t]*(@[A-Za-z_]+[ \t]+)*((internal|public|package|private|fileprivate)[ \t]+)?import[ \t]+" module "([^A-Za-z0-9_.]|$)") }
# The first of VaultKit'"'"'s package types the line names that `allowed` does not hold, or "".
function packageTypeNamed(allowed,    rest, word) {
    rest = line
    while (match(rest, /[A-Za-z_][A-Za-z0-9_]*/)) {
        word = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
        if ((word in packageType) && !index(" " allowed " ", " " word " ")) return word
    }
    return ""
}
FNR == 1 { in_block = 0; in_text = 0 }
{
    line = $0
    if (in_block) { if (line ~ /\*\//) { sub(/.*\*\//, "", line); in_block = 0 } else next }
    if (in_text) { if (index(line, "\"\"\"")) { line = substr(line, index(line, "\"\"\"") + 3); in_text = 0 } else next }
    if (line ~ /^[ \t]*\/\*/ && line !~ /\*\//) { in_block = 1; next }
    if (index(line, "\"\"\"")) {
        rest = substr(line, index(line, "\"\"\"") + 3)
        line = substr(line, 1, index(line, "\"\"\"") - 1)
        if (index(rest, "\"\"\"")) line = line substr(rest, index(rest, "\"\"\"") + 3); else in_text = 1
    }
    gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
    sub(/\/\/.*/, "", line)

    if (line ~ /@testable[ \t]+import/)
        report("@testable import in product code (give it a package API instead)")

    if (match(line, /^[ \t]*(@[A-Za-z_]+[ \t]+)*((internal|public|package|private|fileprivate)[ \t]+)?import[ \t]+C[A-Za-z0-9_]+/)) {
        module = substr(line, RSTART, RLENGTH); sub(/.*import[ \t]+/, "", module)
        if (module in home) {
            if (!under(home[module])) report("import " module " outside " home[module])
        } else if (system("test -d Sources/" module) == 0) {
            report("import " module ": a C module with no row in the layer table")
        }
    }

    if (line ~ /(^|[^A-Za-z0-9_])(sodium|crypto|randombytes)_[a-z]/ && !under(home["CSodium"]))
        report("libsodium call outside " home["CSodium"])
    if (line ~ /(^|[^A-Za-z0-9_])sqlite3_[a-z]/ && !under(home["CSQLite"]))
        report("SQLite call outside " home["CSQLite"])
    if (line ~ /(^|[^A-Za-z0-9_.])PQ[a-z][A-Za-z]*[ \t]*\(/ && !under(home["CLibPQ"]))
        report("libpq call outside " home["CLibPQ"])

    if (line ~ /(^|[^A-Za-z0-9_])(as[?!]|is)[ \t]+(any[ \t]+)?(VaultDatabase|PostgresVaultStorage)([^A-Za-z0-9_]|$)/)
        report("downcast to a storage engine type (ask for a capability protocol instead)")

    if (under("Sources/VaultConcurrency/") && line ~ /^[ \t]*((internal|public|package)[ \t]+)?import[ \t]+VaultKit([^A-Za-z0-9_]|$)/)
        report("VaultConcurrency imports VaultKit")
    if (FILENAME ~ /^Sources\/[^\/]*-credential-vault\// && line ~ /^[ \t]*((internal|public|package)[ \t]+)?import[ \t]+VaultKit/)
        report("a credential helper imports VaultKit (it only execs vault)")

    if (under("Sources/VaultAgent/") || under("Sources/VaultTransfer/")) {
        if (imports("ArgumentParser")) report("VaultAgent and VaultTransfer never import ArgumentParser (the commands are the tool'"'"'s)")
        if (under("Sources/VaultAgent/") && imports("VaultTransfer")) report("VaultAgent imports VaultTransfer (its log and texts come from the tool as hooks)")
        if (under("Sources/VaultTransfer/") && imports("VaultAgent")) report("VaultTransfer imports VaultAgent")
    }
    if (!under("Sources/vault/") && !under("Sources/VaultAgent/") && imports("VaultAgent"))
        report("VaultAgent imported outside Sources/vault (the agent is the tool'"'"'s)")
    if (under("Sources/VaultTransfer/") && (word = packageTypeNamed("")) != "")
        report("VaultTransfer names VaultKit'"'"'s package type " word " (it takes the public API)")
    if (under("Sources/VaultAgent/") && (word = packageTypeNamed(agent_allowed)) != "")
        report("VaultAgent names VaultKit'"'"'s package type " word " (not in its row of the layer table)")
    if (line ~ /(^|[^A-Za-z0-9_])SecureBufferReleaseWatch([^A-Za-z0-9_]|$)/ && !under("Sources/VaultKit/") && !under("Sources/VaultAgent/"))
        report("SecureBufferReleaseWatch outside VaultKit and VaultAgent")
}
END { exit found ? 1 : 0 }
' || status=1

# The CLI names no storage engine, not even in comments and help texts: what is an
# engine's own (a URL example, where its password goes, another form its client takes)
# comes from the engine's registration (VaultEngine.Texts, VaultFileTexts), and
# Sources/vault/Support/StorageEngines.swift holds the one line that registers it.
engine_words='postgres|libpq|sqlite|-wal\b|pgpass'
if [[ -d Sources/vault ]]; then
    hits=$(grep -rnIiE --include='*.swift' "$engine_words" Sources/vault $( [[ -d Sources/VaultAgent ]] && echo Sources/VaultAgent ) | grep -v '^Sources/vault/Support/StorageEngines\.swift:' || true)
    if [[ -n "$hits" ]]; then
        printf '%s\n' "$hits" | awk -F: '{ print $1 ":" $2 ": engine name in the CLI or the agent (take it from the engine'"'"'s VaultEngine.Texts)" }'
        status=1
    fi
fi

if [[ $status -ne 0 ]]; then
    echo "check-layers: the sources break the layer table in docs/ARCHITECTURE.md (above)" >&2
fi
exit $status
