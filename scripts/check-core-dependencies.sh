#!/usr/bin/env bash
# A package that depends on the VaultKit product alone, with VaultKit's traits off,
# must resolve no remote package (docs/DEPENDENCIES.md), and must still build and run.
# Made in a temporary directory next to nothing, as a user's package would be.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
identity=$(basename "$repo" | tr '[:upper:]' '[:lower:]')
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT

mkdir -p "$consumer/Sources/CoreConsumer"
cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "CoreConsumer",
    dependencies: [.package(path: "$repo", traits: [])],
    targets: [.executableTarget(name: "CoreConsumer", dependencies: [.product(name: "VaultKit", package: "$identity")])]
)
MANIFEST
cat >"$consumer/Sources/CoreConsumer/main.swift" <<'SWIFT'
import VaultKit

var secret = SecretBytes("core-")
secret.append(contentsOf: "consumer".utf8)
print("VaultKit \(VaultKitVersion.current): \(secret.string() ?? "")")
SWIFT

cd "$consumer"
swift package resolve
remote=$(find .build/checkouts -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
pins=$(grep -c '"identity"' Package.resolved 2>/dev/null || true)
if [[ "$remote" -ne 0 || "${pins:-0}" -ne 0 ]]; then
    echo "check-core-dependencies: a VaultKit-only package resolved $remote remote package(s):" >&2
    ls .build/checkouts >&2
    exit 1
fi
output=$(swift run -q CoreConsumer)
expected_version=$(sed -nE 's/.*static let current = "([^"]+)".*/\1/p' "$repo/Sources/VaultKit/VaultKitVersion.swift")
if [[ "$output" != "VaultKit $expected_version: core-consumer" ]]; then
    echo "check-core-dependencies: unexpected output from the consumer: $output" >&2
    exit 1
fi
echo "check-core-dependencies: a VaultKit-only package resolves 0 remote packages, builds and runs"
