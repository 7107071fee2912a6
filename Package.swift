// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "VaultKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "VaultKit", targets: ["VaultKit"]),
    ],
    targets: [
        // C libraries from the system, found with pkg-config.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),

        // The vault core: secure bytes, key derivation, sealing, the vault file, the API.
        .target(name: "VaultKit", dependencies: ["CSodium", "CSQLite"]),

        // A small process the tests start to write to a vault from another process,
        // and to kill mid-write.
        .executableTarget(name: "vault-test-writer", dependencies: ["VaultKit"], path: "Tests/Helpers/vault-test-writer"),

        // Shared by the test targets: temporary directories, child processes, cheap KDF limits.
        .target(name: "TestSupport", dependencies: ["VaultKit"], path: "Tests/TestSupport"),

        .testTarget(name: "VaultKitTests", dependencies: ["VaultKit", "CSQLite", "TestSupport", "vault-test-writer"]),
    ],
    swiftLanguageModes: [.v6]
)
