import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A `set` that keeps the value it writes over as a version, on a handle whose buckets
/// are verified but not kept (after `verify()`, as the load driver and a long-running
/// backend hold a vault): prepared, its bucket read without the lock, never the write
/// transaction that holds the header row lock across its round trips (issue 27).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresHistorySetTests {
    /// As the load driver: items written by a batch (unnumbered, no version kept yet), a
    /// new handle verifies the vault, then `set`s items at random, most of them twice or
    /// more. None takes a write transaction (`BEGIN`, `FOR UPDATE`), the first included;
    /// each keeps a version.
    @Test func historySetsAfterVerifyTakeNoWriteTransaction() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let writer = try Vault.create(postgres: location, key: key)
        let count = 300
        try writer.batch { batch in
            for index in 0..<count { try batch.set("v0", service: "load", account: "a\(index)") }
        }
        let (vault, storage) = try TestServer.counted(location, key: key)
        #expect(try vault.verify() == count)
        let locked = storage.writeTransactionsBegun
        var written: [Int: Int] = [:]
        var random = SystemRandomNumberGenerator()
        for round in 1...200 {
            let index = Int.random(in: 0..<count / 4, using: &random)
            try vault.set("v\(round)", service: "load", account: "a\(index)")
            written[index, default: 0] += 1
        }
        #expect(storage.writeTransactionsBegun == locked)
        for (index, times) in written.prefix(20) {
            #expect(try vault.history(service: "load", account: "a\(index)").count == min(times, 10) + 1)
        }
        #expect(try Vault.open(postgres: location, key: key).verify() == count)
    }
}
