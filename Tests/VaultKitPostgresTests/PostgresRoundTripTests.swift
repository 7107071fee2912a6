import Foundation
import StorageConformance
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// What the round-trip savings of `PostgresConnection` and `PostgresVaultStorage` must not
/// cost: writes that travel in a pipeline fail as a whole, a statement the server could
/// not prepare is prepared again, and a writer's own commit keeps what it verified only
/// while nobody else committed.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresRoundTripTests {
    /// A replacement row waits in the pipeline (the engine needs no answer from it) and
    /// fails there, with the manifest's statements behind it: the call throws a typed
    /// error, and neither it nor the rest of its batch is written.
    @Test func aWriteFailingMidPipelineRollsBackAndIsTyped() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key, busyTimeout: .milliseconds(200))
        try vault.set("kept", service: "s", account: "a")
        // Another session holds the item's row: inserting beside it does not wait, replacing it does.
        let holder = try TestServer.attacker()
        try holder.execute("BEGIN")
        try holder.query("SELECT 1 FROM vaultkit_items WHERE vault = $1 FOR UPDATE", [.text(location.vaultName)]) { _ in }
        #expect(throws: VaultError.busy(path: location.description)) { try vault.set("lost", service: "s", account: "a") }
        #expect(throws: VaultError.busy(path: location.description)) {
            try vault.batch { batch in
                try batch.set("new", service: "s", account: "b")
                try batch.set("lost", service: "s", account: "a")
            }
        }
        try holder.execute("ROLLBACK")
        #expect(try vault.string(service: "s", account: "a") == "kept")
        #expect(try vault.items().map(\.account) == ["a"])
        #expect(try vault.verify() == 1)
        // Nothing half-applied: the next write builds on the manifest, seen by another opener too.
        try vault.set("after", service: "s", account: "b")
        #expect(try Vault.open(postgres: location, key: key).verify() == 2)
    }

    /// A statement that failed to prepare (here: no tables yet) is not taken for prepared:
    /// once the tables exist, the same connection prepares and runs it.
    @Test func aStatementThatFailedToPrepareIsPreparedAgain() throws {
        let location = try TestServer.locationInNewSchema().location
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 1_000)
        #expect(throws: StorageError.notFound(location: location.description)) { try storage.readMasterKeyCheck() }
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        #expect(try !storage.readMasterKeyCheck().isEmpty)
    }

    /// A row put back by another session while this one holds the write lock (inside a
    /// batch) is caught on the next read: the commit does not vouch for what else
    /// committed after the lock was taken.
    @Test func aRowPutBackDuringAWriteIsStillRejected() throws {
        let fixture = try TestServer.fixture()
        let vault = fixture.vault
        try vault.set("old", service: "s", account: "alice")
        let old = try #require(try fixture.rows().first)
        try vault.set("new", service: "s", account: "alice")
        try vault.batch { batch in
            try batch.set("other", service: "s", account: "bob")
            try fixture.replace(old)
        }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.string(service: "s", account: "alice") }
    }

    /// A `set` of an existing item, once its bucket digest is known, in the calls the
    /// engine makes (`UnlockedVault.write`, then `applyManifestChanges`): three round
    /// trips, BEGIN + lock + header row, the insert that finds the row in place, then the
    /// writes with COMMIT (Benchmarks/README.md lists the statements). Another test's
    /// commit on the server in between makes the digests be read again (one more), so
    /// the fewest of several tries counts.
    @Test func aSteadySetOfAnExistingRowIsThreeRoundTrips() throws {
        let location = try TestServer.location()
        _ = try Vault.create(postgres: location, key: VaultKey.random())
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 5_000)
        let lookupID = [UInt8](repeating: 7, count: 32)
        let (serviceTag, nonce) = ([UInt8](repeating: 1, count: 32), [UInt8](repeating: 2, count: 24))
        let digest = ManifestDigest.zero
        func set() throws -> Int {
            let before = storage.connection.roundTrips
            try storage.writeTransaction { () throws in
                _ = try storage.readMasterKeyCheck()
                _ = (try storage.readHeader(), try storage.readHostWraps(), try storage.readManifestRoot(), try storage.readGeneration())
                let inserted = try nonce.withUnsafeBytes { try storage.insertIfAbsent(lookupID: lookupID, serviceTag: serviceTag, nonce: $0, sealed: [1]) }
                if !inserted {
                    _ = try storage.withSealedItem(lookupID: lookupID) { (_, _, _) throws(StorageError) in () }
                    try nonce.withUnsafeBytes { try storage.upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: $0, sealed: [2]) }
                }
                _ = try storage.manifestDigest(bucket: 28)
                try storage.setManifestDigest(bucket: 28, digest)
                try storage.writeManifestRoot(digest, tag: digest, generation: 1)
            }
            return storage.connection.roundTrips - before
        }
        var fewest = Int.max
        for _ in 0..<50 { fewest = min(fewest, try set()) }
        #expect(fewest == 3)
    }

    /// A `set` of an existing item replaces the row its insert found in place: the
    /// creation date and the attributes it does not name are kept.
    @Test func aSetOfAnExistingItemKeepsWhatItDoesNotName() throws {
        let vault = try Vault.create(postgres: TestServer.location(), key: VaultKey.random())
        try vault.set("one", service: "s", account: "a", label: "Label", generic: Data([1, 2]))
        let created = try vault.item(service: "s", account: "a").created
        try vault.set("two", service: "s", account: "a")
        let item = try vault.item(service: "s", account: "a")
        #expect(item.label == "Label")
        #expect(item.generic == Data([1, 2]))
        #expect(item.created == created)
        #expect(try vault.string(service: "s", account: "a") == "two")
        #expect(try vault.verify() == 1)
    }
}
