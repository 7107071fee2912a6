#!/usr/bin/env bash
# Every library's DocC catalog (VaultKit, VaultAuth, VaultProfile, VaultKitPostgres, VaultTransfer,
# VaultConfiguration) builds with no warning: every symbol link resolves to exactly one
# symbol (a method with an `async` twin is linked with DocC's disambiguation suffix, which
# `docc` suggests), and every documented parameter list is complete. And every public
# top-level symbol is curated in its module's Topics: one DocC would file under a group it
# generates itself is an error, so a new public type cannot go undocumented unnoticed.
# Uses the debug build's modules (run after `swift build`).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

swift package dump-symbol-graph --minimum-access-level public >"$work/dump.log" 2>&1 || { cat "$work/dump.log" >&2; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$work/dump.log" | tail -1)
[[ -d "$graphs" ]] || { echo "check-docs: no symbol graphs (see the log above)" >&2; cat "$work/dump.log" >&2; exit 1; }

status=0
for module in VaultKit VaultAuth VaultProfile VaultKitPostgres VaultConfiguration VaultTransfer; do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
    if ! docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$work/$module" \
        --output-path "$work/$module.doccarchive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "$module" --warnings-as-errors >"$work/$module.log" 2>&1; then
        echo "check-docs: $module's documentation has warnings:" >&2
        cat "$work/$module.log" >&2
        status=1
        continue
    fi
    # DocC marks the topic groups it makes for uncurated symbols as generated.
    uncurated=$(python3 - "$work/$module.doccarchive/data/documentation" "$module" <<'PY'
import json, pathlib, sys
root, module = pathlib.Path(sys.argv[1]), sys.argv[2]
page = json.loads((root / f"{module.lower()}.json").read_text())
for section in page.get("topicSections", []):
    if section.get("generated"):
        for identifier in section.get("identifiers", []):
            print("  " + identifier.split("/documentation/", 1)[-1])
PY
)
    if [[ -n "$uncurated" ]]; then
        echo "check-docs: $module has public symbols no Topics section of its catalog curates:" >&2
        echo "$uncurated" >&2
        status=1
    else
        echo "check-docs: $module: no warnings, every public symbol curated"
    fi
done
exit $status
