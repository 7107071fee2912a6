import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// The rollback guard on a PostgreSQL vault, where every host can write the tables: a
/// host removed after a re-key (or the database's administrator) puts the earlier rows
/// back. Every host that saw the later state says `rolledBack`, a held vault at its
/// next call and a fresh open alike (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresRollbackGuardTests {
    static let tables = ["vaultkit_header", "vaultkit_items", "vaultkit_manifest", "vaultkit_host_wraps"]

    static func guardDirectory(_ host: String) -> RollbackGuard {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("vaultkit-tests").path
        return RollbackGuard(directory: "\(base)/pg-guard-\(host)-\(UUID().uuidString.prefix(8))/rollback")
    }

    @Test func rowsPutBackAfterAReKeyAreRolledBackOnEveryHostThatSawLater() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        let (held, other) = (Self.guardDirectory("held"), Self.guardDirectory("other"))
        let vault = try Vault.create(postgres: location, key: key)
        try vault.useRollbackGuard(held)
        try vault.set("v1-old-password", service: "db", account: "admin")
        // What the host to be removed keeps: every row of the vault as it is now.
        let attacker = try TestServer.attacker()
        for table in Self.tables { try attacker.execute("CREATE TABLE \(schema).kept_\(table) AS SELECT * FROM \(schema).\(table)") }

        try vault.rekey()
        try vault.set("v2-new-password", service: "db", account: "admin")
        let seen = try Vault.open(postgres: location, key: key)
        try seen.useRollbackGuard(other)
        #expect(try seen.string(service: "db", account: "admin") == "v2-new-password")
        seen.close()

        try attacker.execute("BEGIN")
        for table in Self.tables.reversed() { try attacker.execute("DELETE FROM \(schema).\(table)") }
        for table in Self.tables { try attacker.execute("INSERT INTO \(schema).\(table) SELECT * FROM \(schema).kept_\(table)") }
        try attacker.execute("COMMIT")

        // The old state is self-consistent: a host with no record opens it.
        let unguarded = try Vault.open(postgres: location, key: key)
        #expect(try unguarded.string(service: "db", account: "admin") == "v1-old-password")
        #expect(try unguarded.verify() == 1)
        unguarded.close()
        let expected = VaultError.rolledBack(path: vault.location.description, seenGeneration: 3, fileGeneration: 1)
        #expect(throws: expected) { try vault.string(service: "db", account: "admin") }
        #expect(throws: expected) { try vault.set("fork", service: "db", account: "admin") }
        #expect(throws: expected) { try vault.verify() }
        let reopened = try Vault.open(postgres: location, key: key)
        #expect(throws: expected) { try reopened.useRollbackGuard(other) }
        #expect(throws: expected) { try reopened.useRollbackGuard(held) }
    }

    /// A host removed with `removeHost` kept the rows (its own wrap among them) and the
    /// old master key. It puts them back and writes through them, as any holder of that
    /// key can, until their generation is past every one seen: the remaining host and the
    /// owner, whose records saw the new key, say `rolledBack`; a held handle too.
    @Test func aRemovedHostsRowsWrittenPastTheSeenGenerationAreRolledBack() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        let (ownerGuard, hostGuard) = (Self.guardDirectory("owner"), Self.guardDirectory("web2"))
        let vault = try Vault.create(postgres: location, key: key)
        try vault.useRollbackGuard(ownerGuard)
        try vault.set("v1-old-password", service: "db", account: "admin")
        let removed = HostKeyPair.generate(), remaining = HostKeyPair.generate()
        try vault.addHost(removed.publicKey, name: "old")
        try vault.addHost(remaining.publicKey, name: "web2")
        let pinned = try vault.identity()
        let openAsHost = { () throws -> Vault in
            let host = try Vault.open(postgres: location, hostKey: remaining, identity: pinned)
            try host.useRollbackGuard(hostGuard)
            return host
        }
        #expect(try openAsHost().string(service: "db", account: "admin") == "v1-old-password")
        let attacker = try TestServer.attacker()
        for table in Self.tables { try attacker.execute("CREATE TABLE \(schema).kept_\(table) AS SELECT * FROM \(schema).\(table)") }

        try vault.removeHost("old")
        try vault.set("v2-new-password", service: "db", account: "admin")
        #expect(try openAsHost().string(service: "db", account: "admin") == "v2-new-password")
        let generation = { () throws -> UInt64 in
            UInt64(try attacker.query("SELECT generation FROM \(schema).vaultkit_header") { $0.int64(0, 0) })
        }
        let seen = try generation()

        try attacker.execute("BEGIN")
        for table in Self.tables.reversed() { try attacker.execute("DELETE FROM \(schema).\(table)") }
        for table in Self.tables { try attacker.execute("INSERT INTO \(schema).\(table) SELECT * FROM \(schema).kept_\(table)") }
        try attacker.execute("COMMIT")
        let removedHost = try Vault.open(postgres: location, hostKey: removed, identity: pinned)
        while try generation() <= seen { try removedHost.set("attacker's", service: "db", account: "admin") }
        removedHost.close()
        let forged = try generation()

        // Without a record, every holder takes it: self-consistent, and newer-looking.
        let unguarded = try Vault.open(postgres: location, key: key)
        #expect(try unguarded.string(service: "db", account: "admin") == "attacker's")
        #expect(try unguarded.verify() == 1)
        unguarded.close()
        let expected = VaultError.rolledBack(path: vault.location.description, seenGeneration: seen, fileGeneration: forged)
        #expect(throws: expected) { try vault.string(service: "db", account: "admin") }
        #expect(throws: expected) { try vault.set("fork", service: "db", account: "admin") }
        #expect(throws: expected) { try openAsHost() }
        let reopened = try Vault.open(postgres: location, key: key)
        #expect(throws: expected) { try reopened.useRollbackGuard(ownerGuard) }
        #expect(try generation() == forged, "nothing was written")
    }
}
