// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "VaultKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "VaultKit", targets: ["VaultKit"]),
        .executable(name: "vault", targets: ["vault"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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

        .testTarget(name: "VaultKitTests", dependencies: ["VaultKit", "TestSupport", "vault-test-writer"]),

        // The `vault` command-line tool, and the C calls Swift cannot make for it
        // (variadic prctl, a signal-safe terminal echo restore).
        .target(name: "CVaultCLI"),
        .executableTarget(
            name: "vault",
            dependencies: ["VaultKit", "CVaultCLI", "CSodium", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(name: "VaultCLITests", dependencies: ["vault", "TestSupport", "CSQLite", "vault-test-writer"]),
    ],
    swiftLanguageModes: [.v6]
)
