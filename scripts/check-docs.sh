#!/usr/bin/env bash
# The DocC catalogs of VaultKit, VaultAuth and VaultProfile build with no warning: every
# symbol link resolves to exactly one symbol (a method with an `async` twin is linked with
# DocC's disambiguation suffix, which `docc` suggests), and every documented parameter
# list is complete. Uses the debug build's modules (run after `swift build`).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift package dump-symbol-graph --minimum-access-level public >"$work/dump.log" 2>&1 || { cat "$work/dump.log" >&2; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -1)
[[ -d "$graphs" ]] || { echo "check-docs: no symbol graphs (see the log above)" >&2; cat "$work/dump.log" >&2; exit 1; }

status=0
for module in VaultKit VaultAuth VaultProfile; do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
    if ! docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$work/$module" \
        --output-path "$work/$module.doccarchive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "$module" --warnings-as-errors >"$work/$module.log" 2>&1; then
        echo "check-docs: $module's documentation has warnings:" >&2
        cat "$work/$module.log" >&2
        status=1
    else
        echo "check-docs: $module: no warnings"
    fi
done
exit $status
