import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A row the DBA put back from a snapshot (an older copy of an item's row, the header left
/// alone) is never built on by a write that cannot be prepared: the row a write reads to
/// replace, keep as a version or delete is confirmed under the lock, and its bucket
/// verified again when it is not the row verified, so the write is `tampered` and leaves
/// the put-back row in place, with history kept or not.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresPutBackRowTests {
    enum Write: CaseIterable, Sendable {
        case set, update, delete, batchSet
    }

    @Test(arguments: Write.allCases, [true, false])
    func aWriteOverAPutBackRowIsTampered(_ write: Write, keepHistory: Bool) throws {
        let (vault, _, location, _) = try TestServer.countedVault()
        try vault.set("old", service: "s", account: "a", keepHistory: keepHistory)
        let attacker = try TestServer.attacker()
        let old = try attacker.query("SELECT lookup_id, nonce, sealed FROM vaultkit_items WHERE vault = $1", [.text(location.vaultName)]) {
            ($0.array(0, 0), $0.array(0, 1), $0.array(0, 2))
        }
        try vault.set("new", service: "s", account: "a", keepHistory: keepHistory)
        // Every bucket verified and no row kept: no write of this handle can be prepared.
        _ = try vault.verify()
        _ = try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                [.text(location.vaultName), .bytes(old.0), .bytes(old.1), .bytes(old.2)])
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            switch write {
            case .set: try vault.set("newer", service: "s", account: "a", keepHistory: keepHistory)
            case .update: try vault.update("newer", service: "s", account: "a", keepHistory: keepHistory)
            case .delete: _ = try vault.delete(service: "s", account: "a", keepHistory: keepHistory)
            case .batchSet:
                try vault.batch { batch in
                    try batch.set("other", service: "t", account: "b", keepHistory: keepHistory)
                    try batch.set("newer", service: "s", account: "a", keepHistory: keepHistory)
                }
            }
        }
        // Nothing was written over the put-back row.
        let stored = try attacker.query("SELECT nonce FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [.text(location.vaultName), .bytes(old.0)]) {
            $0.array(0, 0)
        }
        #expect(stored == old.1)
    }

    /// A version purged for good, put back by a DBA who kept a copy of its row, is never
    /// listed or returned, not even by a process that verified the vault before the purge
    /// and holds it open: the row is not one the process verified, so its bucket is
    /// verified again, and it no longer matches.
    @Test func aPurgedVersionPutBackIsNotReadBack() throws {
        let (vault, _, location, _) = try TestServer.countedVault()
        try vault.set("leaked", service: "s", account: "a")
        try vault.set("rotated", service: "s", account: "a")
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        let copied = try attacker.query("SELECT lookup_id, service_tag, nonce, sealed FROM vaultkit_items WHERE vault = $1", [name]) { rows in
            (0..<rows.count).map { (rows.array($0, 0), rows.array($0, 1), rows.array($0, 2), rows.array($0, 3)) }
        }
        #expect(try vault.history(service: "s", account: "a").map(\.number) == [2, 1])
        #expect(try vault.purgeHistory(service: "s", account: "a") == 1)
        #expect(try vault.history(service: "s", account: "a").map(\.number) == [2])
        let stored = try attacker.query("SELECT lookup_id FROM vaultkit_items WHERE vault = $1", [name]) { rows in
            Set((0..<rows.count).map { rows.array($0, 0) })
        }
        for row in copied where !stored.contains(row.0) {
            _ = try attacker.change("INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)",
                                    [name, .bytes(row.0), .bytes(row.1), .bytes(row.2), .bytes(row.3)])
        }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.itemWithSecret(service: "s", account: "a", version: 1) }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.history(service: "s", account: "a") }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.restore(service: "s", account: "a", version: 1) }
        let verify = try #require(throws: VaultError.self) { try vault.verify() }
        #expect(verify.code == .tampered)
    }
}
