import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// The vault's shared lock on PostgreSQL (VaultAuth's cross-host refresh lock): an advisory
/// lock that other sessions see, held until released.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresSharedLockTests {
    /// Whether another session could take the advisory lock `key` now (taken and given back at once).
    static func isFree(_ key: Int64, from observer: PostgresConnection) throws -> Bool {
        let taken = try observer.query("SELECT pg_try_advisory_lock($1)::int::int8", [.int64(key)]) { $0.int64(0, 0) } == 1
        if taken { try observer.query("SELECT pg_advisory_unlock($1)", [.int64(key)]) { _ in } }
        return taken
    }

    @Test func aHeldSharedLockExcludesOtherSessionsUntilReleased() throws {
        let location = try TestServer.location()
        let vault = try Vault.create(postgres: location, key: VaultKey.random())
        let lock = try #require(try vault.sharedLock(named: "refresh"))
        let key = PostgresAdvisoryLock.key(vaultName: location.vaultName, lockName: "refresh")
        let observer = try TestServer.attacker()
        #expect(try Self.isFree(key, from: observer))
        let held = try lock.acquire()
        #expect(try !Self.isFree(key, from: observer))
        // Another vault's lock of the same name is another lock.
        #expect(try Self.isFree(PostgresAdvisoryLock.key(vaultName: location.vaultName + "x", lockName: "refresh"), from: observer))
        held.release()
        #expect(try Self.isFree(key, from: observer))
        // And it can be taken again.
        try lock.acquire().release()
    }

    /// A file vault has no shared lock: its users keep a lock file beside it.
    @Test func aFileVaultHasNoSharedLock() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let vault = try Vault.create(at: directory + "/v.vault", key: VaultKey.random())
        #expect(try vault.sharedLock(named: "refresh") == nil)
    }
}

/// The shared lock of a process that dies: the server ends its session, and the lock with it.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresSharedLockProcessTests {
    @Test func aProcessKilledHoldingTheSharedLockReleasesIt() throws {
        let shared = try PostgresProcessTests.Shared()
        let key = PostgresAdvisoryLock.key(vaultName: shared.location.vaultName, lockName: "refresh")
        let observer = try TestServer.attacker()
        let holder = try shared.writer(["hold-shared-lock", "refresh"])
        try #require(holder.waitForOutput(containing: "locked"), "holder: \(holder.wait().stderr)")
        #expect(try !PostgresSharedLockTests.isFree(key, from: observer))
        holder.send(SIGKILL)
        #expect(holder.wait().signal == SIGKILL)
        // The server notices the closed connection on its own; bounded wait, no timing asserted.
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while try !PostgresSharedLockTests.isFree(key, from: observer), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(try PostgresSharedLockTests.isFree(key, from: observer))
    }
}
