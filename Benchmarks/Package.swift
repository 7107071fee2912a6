// swift-tools-version:6.1
// The benchmarks live in their own package so that users of VaultKit never resolve
// package-benchmark and its dependencies. Run with `swift package benchmark` from here.
import PackageDescription

let package = Package(
    name: "VaultKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "VaultKit", path: "../"),
        // On this toolchain the malloc interposer must be asked for explicitly; naming
        // the trait also leaves out the 6.3-only ARC runtime interposer, which is not mirrored here.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Shared by the suites: temporary vaults of a given size, the quick-mode switch.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [
                .product(name: "VaultKit", package: "VaultKit"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Fixtures"
        ),
        suite("Sealing", extra: ["CSodiumRaw"]),
        suite("Items"),
        suite("Opening"),
        // Needs a server: VAULTKIT_TEST_POSTGRES_URL and PGPASSFILE (README, "PostgreSQL").
        suite("Postgres", extra: [.product(name: "VaultKitPostgres", package: "VaultKit"), "CLibPQRaw"]),
        // Not a suite: one client process of postgres-load.sh (K run at once against one vault).
        .executableTarget(
            name: "PostgresLoad",
            dependencies: [.product(name: "VaultKit", package: "VaultKit"), .product(name: "VaultKitPostgres", package: "VaultKit")],
            path: "PostgresLoad"
        ),
        // Not a suite: item history's costs, each side interleaved with its baseline (history-cost.sh).
        .executableTarget(
            name: "HistoryCost",
            dependencies: [.product(name: "VaultKit", package: "VaultKit"), .product(name: "VaultKitPostgres", package: "VaultKit")],
            path: "HistoryCost"
        ),
        // Not a suite: runs one sealing operation N times for callgrind (callgrind-seal.sh).
        .executableTarget(
            name: "SealingProbe",
            dependencies: [.product(name: "VaultKit", package: "VaultKit"), "CSodiumRaw"],
            path: "Probes/SealingProbe"
        ),
        // Not a suite: builds a passphrase vault of N items, times in-process opens.
        .executableTarget(
            name: "VaultFixtureTool",
            dependencies: [.product(name: "VaultKit", package: "VaultKit"), "BenchmarkFixtures"],
            path: "Probes/VaultFixtureTool"
        ),
        // The raw libsodium baseline: the same system library the core links, under
        // another module name so the suite never reaches into VaultKit's internals.
        .systemLibrary(name: "CSodiumRaw", path: "CSodiumRaw", pkgConfig: "libsodium"),
        // The bare libpq baseline, likewise outside VaultKitPostgres.
        .systemLibrary(name: "CLibPQRaw", path: "CLibPQRaw", pkgConfig: "libpq"),
    ],
    swiftLanguageModes: [.v6]
)

/// One executable per suite under `Benchmarks/<Suite>/<Suite>.swift`, as package-benchmark expects.
func suite(_ name: String, extra: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "VaultKit", package: "VaultKit"),
            "BenchmarkFixtures",
        ] + extra,
        path: name,
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}
