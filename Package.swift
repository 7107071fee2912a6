// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "VaultKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "VaultKit", targets: ["VaultKit"]),
        .executable(name: "vault", targets: ["vault"]),
        .library(name: "VaultProfile", targets: ["VaultProfile"]),
        .library(name: "VaultAuth", targets: ["VaultAuth"]),
        .executable(name: "git-credential-vault", targets: ["git-credential-vault"]),
        .executable(name: "docker-credential-vault", targets: ["docker-credential-vault"]),
        .library(name: "VaultConfiguration", targets: ["VaultConfiguration"]),
        .library(name: "VaultKitPostgres", targets: ["VaultKitPostgres"]),
        .library(name: "VaultTransfer", targets: ["VaultTransfer"]),
    ],
    // Package traits keep a core user's dependency graph empty: a package that depends on
    // VaultKit with `traits: []` resolves no remote package (docs/DEPENDENCIES.md).
    // All are on by default, so `swift build` here and existing users get everything.
    traits: [
        .trait(name: "CLI", description: "The vault command-line tool (swift-argument-parser)."),
        .trait(name: "Lifecycle", description: "VaultProfile and VaultAuth (swift-service-lifecycle, swift-log)."),
        .trait(name: "Configuration", description: "VaultConfiguration (swift-configuration).", enabledTraits: ["Lifecycle"]),
        .default(enabledTraits: ["CLI", "Lifecycle", "Configuration"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
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
        .executableTarget(name: "vault-test-writer", dependencies: ["VaultKit", "TestSupport", "VaultKitPostgres"], path: "Tests/Helpers/vault-test-writer"),

        // Shared by the test targets: temporary directories, child processes, cheap KDF limits.
        .target(name: "TestSupport", dependencies: ["VaultKit", "CSQLite"], path: "Tests/TestSupport"),
        // The trait that runs suites whose tests block their thread off the cooperative pool.
        .target(name: "TestTraits", dependencies: ["TestSupport"], path: "Tests/TestTraits"),

        .testTarget(name: "VaultKitTests", dependencies: ["VaultKit", "TestSupport", "TestTraits", "vault-test-writer", "StorageConformance"]),

        // The `vault` command-line tool, and the C calls Swift cannot make for it
        // (variadic prctl, a signal-safe terminal echo restore).
        .target(name: "CVaultCLI"),
        .executableTarget(
            name: "vault",
            dependencies: ["VaultKit", "VaultAgent", "VaultTransfer", "CVaultCLI", .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["CLI"])), "VaultKitPostgres", "VaultSecretService"]
        ),
        // The agent: its wire protocol, its server (which holds unlocked vaults) and the
        // client side the commands use; internal, not a product: its API is `package`.
        .target(name: "VaultAgent", dependencies: ["VaultKit"]),
        .testTarget(name: "VaultAgentTests", dependencies: ["VaultAgent", "VaultKit", "TestSupport", "TestTraits"]),
        // Import and export formats (other managers' exports, VaultKit's own JSON) and the
        // JSON reader and writer they share with the CLI, on VaultKit's public API.
        .target(name: "VaultTransfer", dependencies: ["VaultKit"]),
        .testTarget(name: "VaultTransferTests", dependencies: ["VaultTransfer", "VaultKit", "TestSupport", "TestTraits"]),
        // `vault secret-service`: the freedesktop Secret Service on a vault. sd-bus and libcrypto
        // are loaded by that command only (Sources/CSecretService), as libpq is.
        .target(name: "CSecretService"),
        .target(name: "VaultSecretService", dependencies: ["VaultKit", "CSecretService"]),
        .testTarget(name: "VaultSecretServiceTests", dependencies: ["VaultSecretService", "VaultKit", "TestSupport"]),
        .testTarget(name: "VaultCLITests", dependencies: ["vault", "VaultKit", "VaultAgent", "VaultTransfer", "TestSupport", "TestTraits", "vault-test-writer", "git-credential-vault", "docker-credential-vault"]),

        // git's and Docker's credential helpers: tiny programs that exec `vault git-credential`
        // or `vault docker-credential`, so they unlock and harden exactly as `vault` does.
        .target(name: "VaultHelperLauncher"),
        .executableTarget(name: "git-credential-vault", dependencies: ["VaultHelperLauncher"]),
        .executableTarget(name: "docker-credential-vault", dependencies: ["VaultHelperLauncher"]),

        // Concurrency helpers VaultProfile and VaultAuth share (one broadcast of values to
        // subscribers); internal, not a product: its API is `package`.
        .target(name: "VaultConcurrency"),

        // The user-profile snapshot store: loaded from the vault at start, persisted
        // shortly after each change and on graceful shutdown.
        .target(name: "VaultProfile", dependencies: [
            "VaultKit",
            "VaultConcurrency",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
            .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Lifecycle"])),
        ]),
        // A runnable example of VaultProfile (stop it with Ctrl-C), also the child process of its tests.
        .executableTarget(name: "profile-demo", dependencies: [
            "VaultProfile",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
            .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Lifecycle"])),
        ], path: "Examples/ProfileDemo"),
        .testTarget(name: "VaultProfileTests", dependencies: [
            "VaultProfile", "TestSupport", "TestTraits", "profile-demo", "VaultKitPostgres",
            "VaultConcurrency",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Token storage on the vault and the auth client (refresh, retry, single-device sessions).
        .target(
            name: "VaultAuth",
            dependencies: [
                "VaultKit",
                "VaultConcurrency",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Lifecycle"])),
            ]
        ),

        // A small process the auth tests start: logs in, runs a ServiceGroup, refreshes; killed with
        // SIGKILL mid-refresh or stopped with SIGTERM.
        .executableTarget(
            name: "vault-auth-test-client",
            dependencies: [
                "VaultAuth",
                "VaultKit",
                "VaultKitPostgres",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Lifecycle"])),
            ],
            path: "Tests/Helpers/vault-auth-test-client"
        ),

        // The three first-token grants, runnable against a real server (docs/AUTH.md), also run by the tests.
        .executableTarget(name: "auth-grants-demo", dependencies: ["VaultAuth", "VaultKit"], path: "Examples/AuthGrantsDemo"),

        .testTarget(
            name: "VaultAuthTests",
            dependencies: [
                "VaultAuth",
                "VaultKit",
                "VaultKitPostgres",
                "TestSupport",
                "vault-auth-test-client",
                "auth-grants-demo",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // A swift-configuration provider backed by a vault service, watched by polling.
        .target(
            name: "VaultConfiguration",
            dependencies: [
                "VaultKit",
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Configuration"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Lifecycle"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Lifecycle"])),
            ]
        ),
        .testTarget(
            name: "VaultConfigurationTests",
            dependencies: [
                "VaultConfiguration",
                "VaultKit",
                "TestSupport",
                "vault-test-writer",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The PostgreSQL storage engine, its own product so a SQLite-only user never builds
        // libpq (docs/POSTGRES.md).
        // Headers only (no pkg-config: its `-lpq` would make every program load libpq at start).
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // libpq's functions, loaded from libpq on first use (Sources/CLibPQLoader/libpq_loader.c).
        .target(name: "CLibPQLoader", dependencies: ["CLibPQ"]),
        .target(name: "VaultKitPostgres", dependencies: ["VaultKit", "CLibPQ", "CLibPQLoader"]),
        // The engine behaviour every storage must give, run by each engine's test target.
        .target(name: "StorageConformance", dependencies: ["VaultKit"], path: "Tests/StorageConformance"),
        .testTarget(name: "VaultKitPostgresTests", dependencies: ["VaultKitPostgres", "VaultKit", "StorageConformance", "TestSupport", "TestTraits", "vault-test-writer"]),
    ],
    swiftLanguageModes: [.v6]
)
