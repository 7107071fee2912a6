import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A batch's `set`s go into PostgreSQL many rows per statement (`GatheringInsertStorage`):
/// each still behaves as a `set` made on its own.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresBulkInsertTests {
    @Test func aBatchOfSetsGoesInTogetherAndEachBehavesAsASet() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.set("old", service: "s", account: "kept", label: "Label")
        let created = try vault.item(service: "s", account: "kept").created
        let count = 2_500  // more than one statement's worth
        try vault.batch { batch in
            for index in 0..<count { try batch.set("v\(index)", service: "s", account: "n\(index)") }
            // An item in place is written over, keeping what the set does not name.
            try batch.set("new", service: "s", account: "kept")
            // The same item twice: the second builds on the first.
            try batch.set("first", service: "s", account: "twice", label: "Twice")
            try batch.set("second", service: "s", account: "twice")
            // An add sees the sets gathered before it.
            #expect(throws: VaultError.duplicateItem) { try batch.add("x", service: "s", account: "n7") }
        }
        #expect(try vault.items().count == count + 2)
        let kept = try vault.item(service: "s", account: "kept")
        #expect(kept.label == "Label")
        #expect(kept.created == created)
        #expect(try vault.string(service: "s", account: "kept") == "new")
        #expect(try vault.string(service: "s", account: "twice") == "second")
        #expect(try vault.item(service: "s", account: "twice").label == "Twice")
        #expect(try vault.string(service: "s", account: "n7") == "v7")
        #expect(try Vault.open(postgres: location, key: key).verify() == count + 2)
    }

    /// The gathered sets fail together in a later call (here a `delete`, which sends them
    /// first); a caller that catches that and goes on still gets the batch's failure, and
    /// nothing of it is written. (In a schema of its own: the check is on the table.)
    @Test func aGatheredInsertFailingFailsItsBatchEvenIfCaught() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let attacker = try TestServer.attacker()
        let vault = try Vault.create(postgres: location, key: VaultKey.random())
        try vault.set("kept", service: "s", account: "a")
        try attacker.execute("ALTER TABLE \(schema).vaultkit_items ADD CONSTRAINT small CHECK (length(sealed) < 1000)")
        #expect(throws: VaultError.corrupted(reason: .storageStructureRefused)) {
            try vault.batch { batch in
                for index in 0..<5 { try batch.set("small", service: "s", account: "n\(index)") }
                try batch.set(String(repeating: "x", count: 2_000), service: "s", account: "big")
                do { _ = try batch.delete(service: "s", account: "a") } catch {}
            }
        }
        try attacker.execute("ALTER TABLE \(schema).vaultkit_items DROP CONSTRAINT small")
        #expect(try vault.items().map(\.account) == ["a"])
        #expect(try vault.verify() == 1)
    }
}
