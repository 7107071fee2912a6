import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault` starts without loading Foundation: `import Foundation` links
/// FoundationInternationalization and ICU (about 40 MB and a C++ runtime), which the
/// dynamic loader then relocates on every `vault get` (Benchmarks/README.md, "The agent").
/// VaultKit and the tool import only FoundationEssentials.
@Suite(.offCooperativePool) struct LinkageTests {
    #if os(Linux)
    /// The shared objects a `vault` process loads, by file name, as glibc's loader names
    /// them on standard error with `LD_DEBUG=files`.
    static func loadedObjects(_ cli: CLI, _ arguments: [String], vault: Bool = false) throws -> Set<String> {
        let result = try cli.run(arguments, env: ["LD_DEBUG": "files"], vault: vault)
        #expect(result.status == 0, "\(result.stderr)")
        let loaded = Set(result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return (String(line[start.upperBound...].prefix { $0 != " " && $0 != "[" }) as NSString).lastPathComponent
        })
        #expect(!loaded.isEmpty, "LD_DEBUG=files named no objects: \(result.stderr.prefix(300))")
        return loaded
    }

    @Test func vaultLoadsNoFoundationBeyondEssentials() throws {
        let loaded = try Self.loadedObjects(CLI(), ["--version"])
        let refused = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "libFoundationNetworking.so"]
        #expect(loaded.filter { refused.contains($0) }.isEmpty, "\(loaded.sorted())")
    }

    /// libpq (and the ~20 libraries it needs) is loaded by the first PostgreSQL call
    /// (CLibPQLoader), not at the start of every command: a file vault never loads it.
    @Test func libpqIsNotLoadedForAFileVault() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        let file = try Self.loadedObjects(cli, ["get", "s", "a"], vault: true)
        #expect(!file.contains { $0.hasPrefix("libpq.so") }, "\(file.sorted())")
        #expect(file.contains { $0.hasPrefix("libsodium") }, "\(file.sorted())")
    }

    @Test(.enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server"))
    func libpqIsLoadedForAPostgresVault() throws {
        let cli = CLI()
        let server = try #require(PostgresTestServer.url, "VAULTKIT_TEST_POSTGRES_URL is not set (scripts/postgres-test-cluster.sh)")
        let postgres = try Self.loadedObjects(cli, ["init", "--vault", server + "#linkage-" + UUID().uuidString.lowercased()] + CLI.cheapKDF)
        #expect(postgres.contains { $0.hasPrefix("libpq.so") }, "\(postgres.sorted())")
    }

    /// `vault get` loads the Swift runtime (FoundationEssentials at most), the C library,
    /// libsodium and SQLite, and nothing else: the agent's and the transfer formats'
    /// libraries (VaultAgent, VaultTransfer) are linked into the binary and bring none,
    /// and every other library (libpq, sd-bus, ICU) waits for the command that needs it.
    @Test func vaultGetLoadsOnlyTheRuntimesSodiumAndSQLite() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        let loaded = try Self.loadedObjects(cli, ["get", "s", "a"], vault: true)
        let allowed = [
            // The Swift runtime and what it is built on.
            "libswift", "libFoundationEssentials.so", "lib_FoundationCollections.so", "libdispatch.so", "libBlocksRuntime.so",
            "libstdc++.so", "libgcc_s.so",
            // The C library and its loader.
            "ld-linux", "libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "libutil.so",
            // The vault's own two.
            "libsodium.so", "libsqlite3.so",
        ]
        let others = loaded.filter { object in !allowed.contains { object.hasPrefix($0) } }
        #expect(others.isEmpty, "\(others.sorted()) among \(loaded.sorted())")
        #expect(loaded.contains { $0.hasPrefix("libsodium.so") } && loaded.contains { $0.hasPrefix("libsqlite3.so") }, "\(loaded.sorted())")
    }

    /// sd-bus (libsystemd) and libcrypto are loaded by `vault secret-service` only, on
    /// first use (Sources/CSecretService), not by every command.
    @Test func secretServiceLibrariesAreNotLoadedByOtherCommands() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        let loaded = try Self.loadedObjects(cli, ["get", "s", "a"], vault: true)
        #expect(!loaded.contains { $0.hasPrefix("libsystemd.so") || $0.hasPrefix("libcrypto.so") }, "\(loaded.sorted())")
    }
    #endif
}
