// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "VaultKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "VaultKit", targets: ["VaultKit"]),
        .library(name: "VaultAuth", targets: ["VaultAuth"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // Test-only: the real HTTP server the VaultAuth tests talk to.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
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

        // Token storage on the vault and the auth client (refresh, retry, single-device sessions).
        .target(
            name: "VaultAuth",
            dependencies: [
                "VaultKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // A small process the auth tests start: logs in, runs a ServiceGroup, refreshes; killed with
        // SIGKILL mid-refresh or stopped with SIGTERM.
        .executableTarget(
            name: "vault-auth-test-client",
            dependencies: [
                "VaultAuth",
                "VaultKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Helpers/vault-auth-test-client"
        ),

        .testTarget(
            name: "VaultAuthTests",
            dependencies: [
                "VaultAuth",
                "VaultKit",
                "TestSupport",
                "vault-auth-test-client",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
