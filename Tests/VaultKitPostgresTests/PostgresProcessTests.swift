import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Several hosts on one PostgreSQL vault, simulated as separate processes
/// (`vault-test-writer` with a `pg:NAME` vault), each with its own connection.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresProcessTests {
    /// A vault for a process test, the key file its writers read, and the environment that
    /// tags their sessions with `applicationName`, so the server's activity view tells
    /// this test's connections apart from other tests'.
    struct Shared {
        let location: PostgresVaultLocation
        let key: VaultKey
        let keyFile: String
        let applicationName: String
        let environment: [String: String]

        init(_ label: String = #function) throws {
            applicationName = "vk-" + UUID().uuidString.lowercased()
            let url = try TestServer.url()
            let taggedURL = url + (url.contains("?") ? "&" : "?") + "application_name=\(applicationName)"
            location = try PostgresVaultLocation(taggedURL, vaultName: applicationName)
            key = VaultKey.random()
            _ = try Vault.create(postgres: location, key: key)
            keyFile = TestPaths.temporaryDirectory(label) + "/vault.key"
            #expect(FileManager.default.createFile(atPath: keyFile, contents: key.withUnsafeBytes { Data($0) }, attributes: [.posixPermissions: 0o600]))
            environment = ChildProcess.cleanEnvironment(["VAULTKIT_TEST_POSTGRES_URL": taggedURL])
        }

        /// - Parameter readingFromStandby: its gets may go to this hot standby.
        func writer(_ arguments: [String], readingFromStandby standby: String? = nil) throws -> ChildProcess {
            var environment = environment
            if let standby { environment["VAULTKIT_TEST_READ_STANDBY_URL"] = standby }
            return try ChildProcess(TestPaths.executable("vault-test-writer"), [arguments[0], "pg:" + location.vaultName, keyFile] + arguments.dropFirst(), environment: environment)
        }

        /// This test's sessions, as the server sees them.
        func sessions(_ observer: PostgresConnection) throws -> Int64 {
            try observer.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [.text(applicationName)]) { $0.int64(0, 0) }
        }

        /// This test's sessions that wait for a lock, as the server sees them.
        func sessionsWaitingForALock(_ observer: PostgresConnection) throws -> Int64 {
            try observer.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [.text(applicationName)]) { $0.int64(0, 0) }
        }
    }

    /// Processes racing mixed writes (set, add, update, delete, and `add`s of shared items)
    /// leave exactly what replaying each one's acknowledged operations gives: no
    /// acknowledged write lost, no refused one applied, one winner per raced `add`.
    @Test func mixedWritesFromManyProcessesEndInTheReplayOfTheirAcknowledgements() throws {
        let shared = try Shared()
        let processes = 4, operations = 60
        let children = try (0..<processes).map { index in
            try shared.writer(["mixed-ops", "p\(index)", "\(1_000 + index)", "\(operations)"])
        }
        var replay = MixedReplay()
        for child in children {
            let result = child.wait(timeout: .seconds(300))
            #expect(result.status == 0, "writer failed: \(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == operations)
            replay.replay(result.stdout)
        }
        #expect(replay.contradictions == [])
        let vault = try Vault.open(postgres: shared.location, key: shared.key)
        for service in ["mixed", "race"] {
            var stored: [String: String] = [:]
            for item in try vault.items(service: service) {
                stored[item.account] = try vault.string(service: service, account: item.account)
            }
            #expect(stored == replay.items[service, default: [:]], "service \(service)")
        }
        #expect(try vault.verify() == replay.items.values.map(\.count).reduce(0, +))
    }

    /// A process killed with SIGKILL inside a write transaction (holding the header row
    /// lock) loses its connection, and the server then ends the transaction and frees the
    /// lock: the writers queued behind it go on long before their busy timeout (60 s,
    /// while the holder meant to hold for 600 s), nothing acknowledged is lost and the
    /// killed transaction's write is not there.
    @Test func aProcessKilledHoldingTheWriteLockDoesNotBlockTheOthers() throws {
        let shared = try Shared()
        let before = try Vault.open(postgres: shared.location, key: shared.key)
        try before.set("kept", service: "before", account: "a")
        let holder = try shared.writer(["hold-lock", "600"])
        try #require(holder.waitForOutput(containing: "locked"), "holder: \(holder.wait().stderr)")
        let writers = 3, writes = 5
        let children = try (0..<writers).map { try shared.writer(["write", "w\($0)", "\(writes)"]) }
        // Kill the holder only once every writer waits for its lock.
        let observer = try TestServer.attacker()
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while try shared.sessionsWaitingForALock(observer) < writers, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        try #require(try shared.sessionsWaitingForALock(observer) == writers)
        holder.send(SIGKILL)
        #expect(holder.wait().signal == SIGKILL)
        for (index, child) in children.enumerated() {
            let result = child.wait(timeout: .seconds(300))
            #expect(result.status == 0, "writer \(index) failed: \(result.stderr)")
            #expect(result.stdout.contains("ack \(writes - 1)"))
        }
        let vault = try Vault.open(postgres: shared.location, key: shared.key)
        #expect(try vault.items(service: "lock").isEmpty)
        #expect(try vault.string(service: "before", account: "a") == "kept")
        for writer in 0..<writers {
            for index in 0..<writes {
                #expect(try vault.string(service: "svc", account: "w\(writer)-\(index)") == "v-w\(writer)-\(index)")
            }
        }
        #expect(try vault.verify() == 1 + writers * writes + 1)
    }
}
