import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Early lock release (docs/POSTGRES.md): a write commits without waiting for its WAL
/// flush, so the header row lock is free at once, and the durability barrier behind it
/// waits for the flush before the call returns. Checked on a server of the test's own
/// whose WAL writer is stopped and which is then crashed (``CrashableServer``): only what
/// a session flushed survives.
@Suite(.offCooperativePool, .serialized, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresDurabilityTests {
    /// Every acknowledged write survives a crash right after its call returned, through
    /// both write paths (a transaction of its own, and a prepared `set`); and each write
    /// costs one WAL flush, the barrier's: its own commit did not wait for one.
    @Test func anAcknowledgedWriteSurvivesACrashAndWaitsForOneFlush() throws {
        let server = try CrashableServer()
        let location = try server.location("durable")
        let key = VaultKey.random()
        let (vault, storage) = try Self.createdVault(location, key: key)
        try vault.set(SecretBytes("before"), service: "s", account: "a")
        #expect(storage.connection.hasDurabilityBarrier)

        try server.stopWALWriter()
        let flushesBefore = try server.walSyncs(reportedBy: [storage.connection])
        try vault.set(SecretBytes("new item"), service: "s", account: "b")
        try vault.set(SecretBytes("replaced"), service: "s", account: "a")
        try vault.delete(service: "s", account: "b")
        try vault.set(SecretBytes("last"), service: "s", account: "c")
        #expect(try server.walSyncs(reportedBy: [storage.connection]) - flushesBefore == 4)
        // Both paths ran: a transaction of its own and a prepared set.
        let sent = Set(storage.connection.prepared.keys.map(\.sql))
        #expect(sent.contains(PostgresSQL.beginWrite) && sent.contains(PostgresSQL.preparedHeaderUpdate))
        vault.close()

        try server.crash()
        let reopened = try Vault.open(postgres: location, key: key)
        defer { reopened.close() }
        #expect(try reopened.secret(service: "s", account: "a") == SecretBytes("replaced"))
        #expect(try !reopened.contains(service: "s", account: "b"))
        #expect(try reopened.secret(service: "s", account: "c") == SecretBytes("last"))
        #expect(try reopened.verify() == 2)
    }

    /// A role that may not run the barrier (an administrator revoked
    /// `pg_logical_emit_message` from `PUBLIC`) still writes, durably: each write's own
    /// commit waits for its flush, as before early lock release, so an acknowledged write
    /// survives a crash right after its call returned.
    @Test func aRoleWithoutTheBarrierWritesSynchronously() throws {
        let server = try CrashableServer()
        try server.superuser().execute("REVOKE EXECUTE ON FUNCTION \(PostgresSQL.barrierFunction) FROM PUBLIC")
        let location = try server.location("synchronous")
        let key = VaultKey.random()
        let (vault, storage) = try Self.createdVault(location, key: key)
        try vault.set(SecretBytes("before"), service: "s", account: "a")
        #expect(!storage.connection.hasDurabilityBarrier)

        try server.stopWALWriter()
        try vault.set(SecretBytes("new item"), service: "s", account: "b")
        try vault.set(SecretBytes("replaced"), service: "s", account: "a")
        try vault.delete(service: "s", account: "b")
        try vault.set(SecretBytes("last"), service: "s", account: "c")
        let sent = Set(storage.connection.prepared.keys.map(\.sql))
        #expect(!sent.contains(PostgresSQL.durabilityBarrier))
        vault.close()

        try server.crash()
        let reopened = try Vault.open(postgres: location, key: key)
        defer { reopened.close() }
        #expect(try reopened.secret(service: "s", account: "a") == SecretBytes("replaced"))
        #expect(try !reopened.contains(service: "s", account: "b"))
        #expect(try reopened.secret(service: "s", account: "c") == SecretBytes("last"))
        #expect(try reopened.verify() == 2)
    }

    /// Another session's commit can be read before it is durable. The rollback guard
    /// records a state it read only after the barrier made it durable, so a crash that
    /// takes back a state nobody flushed is never called a rollback: neither by a writer
    /// that met it under the lock and then failed, nor by a reader.
    @Test func theRollbackRecordIsNeverAheadOfTheDurableState() throws {
        let server = try CrashableServer()
        let key = VaultKey.random()
        let source = try Vault.create(postgres: server.location("source"), key: key)
        defer { source.close() }
        try source.set(SecretBytes("old"), service: "s", account: "x")
        let administrator = try server.superuser()
        try Self.replaceRows(of: "copy", withThoseOf: "source", synchronously: true, administrator)
        try source.set(SecretBytes("new"), service: "s", account: "x")
        let base = TestPaths.temporaryDirectory()
        let (writerGuard, readerGuard) = (RollbackGuard(directory: base + "/writer"), RollbackGuard(directory: base + "/reader"))

        // A writer meets the newer state under its lock, then fails: it commits nothing,
        // so nothing waits for a flush.
        let writer = try Vault.open(postgres: server.location("copy"), key: key)
        try writer.useRollbackGuard(writerGuard)
        try server.stopWALWriter()
        try Self.replaceRows(of: "copy", withThoseOf: "source", synchronously: false, administrator)
        #expect(throws: VaultError.duplicateItem) { try writer.add(SecretBytes("again"), service: "s", account: "x") }
        writer.close()
        try server.crash()
        let afterWriter = try Vault.open(postgres: server.location("copy"), key: key)
        #expect(throws: Never.self) { try afterWriter.useRollbackGuard(writerGuard) }
        #expect((try? afterWriter.secret(service: "s", account: "x")) == SecretBytes("old"))
        afterWriter.close()

        // A reader meets it, verifies it and records it: only after its barrier, so the
        // crash leaves the state it recorded.
        let reader = try Vault.open(postgres: server.location("copy"), key: key)
        try reader.useRollbackGuard(readerGuard)
        let administrator2 = try server.superuser()
        try server.stopWALWriter()
        try Self.replaceRows(of: "copy", withThoseOf: "source", synchronously: false, administrator2)
        #expect(try reader.secret(service: "s", account: "x") == SecretBytes("new"))
        #expect(try reader.verify() == 1)
        reader.close()
        try server.crash()
        let afterReader = try Vault.open(postgres: server.location("copy"), key: key)
        defer { afterReader.close() }
        try afterReader.useRollbackGuard(readerGuard)
        #expect(try afterReader.secret(service: "s", account: "x") == SecretBytes("new"))
    }

    /// A new vault at `location`, opened on a storage the test can read the session of.
    /// The vault owns the storage; the test reads its session on the same thread (as
    /// `TestServer.countedVault()`).
    static func createdVault(_ location: PostgresVaultLocation, key: VaultKey) throws -> (Vault, PostgresVaultStorage) {
        _ = try Vault.create(postgres: location, key: key)
        let opened = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 5_000)
        let address = UInt(bitPattern: Unmanaged.passUnretained(opened).toOpaque())
        let vault = try Vault.open(opened, key: key)
        return (vault, Unmanaged<PostgresVaultStorage>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue())
    }

    /// Puts vault `target`'s rows in place of those of vault `name`, as a writer of the
    /// same rows would (the name is not authenticated): an asynchronous commit unless
    /// `synchronously`.
    static func replaceRows(of target: String, withThoseOf name: String, synchronously: Bool, _ administrator: PostgresConnection) throws {
        var sql = "BEGIN; SET LOCAL synchronous_commit = \(synchronously ? "on" : "off"); "
        let tables = ["vaultkit_header", "vaultkit_items", "vaultkit_manifest", "vaultkit_host_wraps"]
        for table in tables.reversed() { sql += "DELETE FROM \(table) WHERE vault = '\(target)'; " }
        for table in tables {
            sql += "CREATE TEMP TABLE copied ON COMMIT DROP AS SELECT * FROM \(table) WHERE vault = '\(name)'; "
            sql += "UPDATE copied SET vault = '\(target)'; INSERT INTO \(table) SELECT * FROM copied; DROP TABLE copied; "
        }
        try administrator.execute(sql + "COMMIT")
    }
}
