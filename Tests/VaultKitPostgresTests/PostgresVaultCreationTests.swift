import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Creating a vault where the tables already hold others (a new tenant on a busy server).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresVaultCreationTests {
    /// Another session is writing (its open transaction holds the tables' ROW EXCLUSIVE
    /// locks, as every write does): a new vault is created without waiting for it. Before,
    /// the creation ran `CREATE INDEX IF NOT EXISTS`, whose SHARE lock on the table waits
    /// for every writer and holds back every writer after it until the creation commits;
    /// here it waited the whole lock timeout (two minutes) and failed `busy`. The bound is
    /// a liveness check, not a measurement.
    @Test func aVaultIsCreatedBesideAnOpenWrite() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        try Vault.create(postgres: location, key: VaultKey.random()).set("x", service: "s", account: "a")
        let writer = try TestServer.attacker()
        try writer.execute("BEGIN; LOCK TABLE \(schema).vaultkit_items, \(schema).vaultkit_manifest_changes IN ROW EXCLUSIVE MODE")
        let second = try PostgresVaultLocation(location.conninfo, vaultName: "second")
        let started = ContinuousClock.now
        let key = VaultKey.random()
        try Vault.create(postgres: second, key: key, busyTimeout: .seconds(120)).close()
        #expect(ContinuousClock.now - started < .seconds(30))
        try writer.execute("COMMIT")
        let vault = try Vault.open(postgres: second, key: key)
        try vault.set("y", service: "s", account: "b")
        #expect(try vault.verify() == 1)
    }

    /// In a schema without the tables, creating the first vault still creates them all.
    @Test func theFirstVaultCreatesEveryTableAndIndex() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        try Vault.create(postgres: location, key: VaultKey.random()).close()
        let names = try TestServer.attacker().query(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1", [.text(schema)]
        ) { rows in (0..<rows.count).map { rows.text($0, 0) } }
        #expect(Set(PostgresSchema.created).isSubset(of: Set(names)))
    }
}
