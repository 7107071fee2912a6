// swift-tools-version:6.0
// libFuzzer targets for VaultKit, in their own package so the library's normal build
// never sees fuzzer flags. Build and run with Fuzz/run.sh.
import Foundation
import PackageDescription

// A path dependency is named after its directory, which is whatever the clone is called.
let vaultKitPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "VaultKitFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../")],
    targets: [
        .target(name: "FuzzSupport", path: "FuzzSupport"),
        .executableTarget(name: "FuzzRecordDecoder", dependencies: ["FuzzSupport", .product(name: "VaultKit", package: vaultKitPackage)], path: "FuzzRecordDecoder"),
        .executableTarget(name: "FuzzVaultFile", dependencies: ["FuzzSupport", .product(name: "VaultKit", package: vaultKitPackage)], path: "FuzzVaultFile"),
        // The agent's message decoders: symbolic links to VaultAgent's sources, which is no
        // product of the main package, so this one cannot depend on it.
        .executableTarget(name: "FuzzAgentMessage", dependencies: ["FuzzSupport", .product(name: "VaultKit", package: vaultKitPackage)], path: "FuzzAgentMessage"),
    ],
    swiftLanguageModes: [.v6]
)
