import Foundation
import Testing
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// The rollback guard on a PostgreSQL vault, where every host can write the tables: a
/// host removed after a re-key (or the database's administrator) puts the earlier rows
/// back. Every host that saw the later state says `rolledBack`, a held vault at its
/// next call and a fresh open alike (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool) struct PostgresRollbackGuardTests {
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
        let expected = VaultError.rolledBack(path: vault.path, seenGeneration: 3, fileGeneration: 1)
        #expect(throws: expected) { try vault.string(service: "db", account: "admin") }
        #expect(throws: expected) { try vault.set("fork", service: "db", account: "admin") }
        #expect(throws: expected) { try vault.verify() }
        let reopened = try Vault.open(postgres: location, key: key)
        #expect(throws: expected) { try reopened.useRollbackGuard(other) }
        #expect(throws: expected) { try reopened.useRollbackGuard(held) }
    }
}
