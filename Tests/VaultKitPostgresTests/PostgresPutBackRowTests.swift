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
}
