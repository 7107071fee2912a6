import Foundation
import StorageConformance
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A lone `set` sends its insert with the write lock (`OpeningInsert`), and a `list`
/// reads its rows with the snapshot it verifies: what that saves, and what it must not
/// cost (an early insert that another session's commit made stale is undone; one the
/// engine did not ask for is never committed).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresEarlyInsertTests {
    /// The fewest round trips `body` took in several tries: another test's commit on the
    /// server in between makes the engine read its manifest again (more round trips).
    private static func fewestRoundTrips(_ storage: PostgresVaultStorage, _ body: () throws -> Void) throws -> Int {
        var fewest = Int.max
        for _ in 0..<50 {
            let before = storage.connection.roundTrips
            try body()
            fewest = min(fewest, storage.connection.roundTrips - before)
        }
        return fewest
    }

    /// A `set` of an existing item whose bucket is verified but whose rows are not kept
    /// (a `verify()` checks every row and keeps none; otherwise the `set` is prepared in
    /// one round trip, PostgresPreparedSetTests): BEGIN, the lock, the header row and the
    /// insert that finds the row in place, then the writes with COMMIT. One that keeps
    /// the row it finds as a version reads the bucket whole without the lock instead (the
    /// read's snapshot and vault state, then the rows) and is prepared from it: one round
    /// trip more, but no write transaction (PostgresHistorySetTests).
    @Test(arguments: [(false, 2), (true, 3)])
    func aSetWithoutKeptRowsIsTwoOrThreeRoundTrips(keepHistory: Bool, expected: Int) throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        try vault.set("first", service: "s", account: "a")
        var round = 0
        var fewest = Int.max
        for _ in 0..<50 {
            round += 1
            _ = try vault.verify()
            let before = storage.connection.roundTrips
            let locked = storage.writeTransactionsBegun
            try vault.set("value \(round)", service: "s", account: "a", keepHistory: keepHistory)
            fewest = min(fewest, storage.connection.roundTrips - before)
            if keepHistory { #expect(storage.writeTransactionsBegun == locked) }
        }
        #expect(fewest == expected)
        #expect(try vault.string(service: "s", account: "a") == "value \(round)")
        // The current item, and the ten versions the default retention keeps.
        #expect(try vault.history(service: "s", account: "a").count == (keepHistory ? 11 : 1))
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// A `list` whose manifest is verified: its rows, with the snapshot they come from,
    /// in one round trip; the read-only transaction's COMMIT goes without waiting.
    @Test func aSteadyListIsOneRoundTrip() throws {
        let (vault, storage, _, _) = try TestServer.countedVault()
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "b")
        let fewest = try Self.fewestRoundTrips(storage) { () throws in
            let accounts = try vault.items(service: "s").map(\.account)
            #expect(accounts == ["a", "b"])
        }
        #expect(fewest == 1)
        // Whatever follows reads the COMMIT's answer first, in pipeline mode or not.
        #expect(try vault.string(service: "s", account: "a") == "one")
        try vault.set("three", service: "s", account: "c")
        #expect(try vault.items().count == 3)
    }

    /// Another session commits between this vault's last check and its next `set` of a
    /// new item in a bucket it verified: the insert sent with the lock was prepared for a
    /// state that is gone, so it is undone and the `set` runs as any other (verifying
    /// the bucket first). Kept, it would be counted twice in the bucket's check.
    @Test func anEarlyInsertIsUndoneWhenAnotherSessionCommittedFirst() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.set("a", service: "s", account: "a")
        // Verifies every bucket, keeping no rows (so the `set` is not prepared whole).
        _ = try vault.verify()
        try Vault.open(postgres: location, key: key).set("other", service: "t", account: "c")
        try vault.set("b", service: "s", account: "b")
        #expect(try vault.string(service: "s", account: "b") == "b")
        #expect(try vault.verify() == 3)
        #expect(try Vault.open(postgres: location, key: key).verify() == 3)
    }

    /// Undoing an early insert costs no round trip of its own: after another session's
    /// commit, a `set` whose insert went with the lock and was deleted again takes as many
    /// round trips as one whose bucket was never verified, which sends no early insert
    /// (both verify the manifest first).
    @Test func anUndoneEarlyInsertCostsNoRoundTrip() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        let other = try Vault.open(postgres: location, key: key)
        var undone = Int.max
        var plain = Int.max
        for round in 0..<10 {
            // Verifies every bucket, keeping no rows (so the `set` is not prepared whole).
            _ = try vault.verify()
            try other.set("z", service: "t", account: "z\(round)")
            var before = storage.connection.roundTrips
            try vault.set("x", service: "s", account: "x\(round)")
            undone = min(undone, storage.connection.roundTrips - before)
            try other.set("w", service: "t", account: "w\(round)")
            before = storage.connection.roundTrips
            try vault.set("y", service: "u", account: "y\(round)")
            plain = min(plain, storage.connection.roundTrips - before)
        }
        #expect(undone == plain)
        #expect(try vault.verify() == 40)
    }

    /// Another session re-keys the vault: the early insert, sealed under the old keys, is
    /// undone, and the `set` follows the new keys.
    @Test func anEarlyInsertIsUndoneWhenTheVaultWasRekeyed() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.set("a", service: "s", account: "a")
        _ = try vault.verify()
        try Vault.open(postgres: location, key: key).rekey()
        try vault.set("a2", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "a2")
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// The vault's rows deleted by another session while a handle has it open: a `set`
    /// whose insert travels with the lock is told the vault is gone, as any other write.
    @Test func anEarlyInsertIntoADeletedVaultIsVaultNotFound() throws {
        let location = try TestServer.location()
        let vault = try Vault.create(postgres: location, key: VaultKey.random())
        try vault.set("a", service: "s", account: "a")
        let attacker = try TestServer.attacker()
        for table in ["vaultkit_items", "vaultkit_manifest", "vaultkit_host_wraps", "vaultkit_header"] {
            _ = try attacker.change("DELETE FROM \(table) WHERE vault = $1", [.text(location.vaultName)])
        }
        #expect(throws: VaultError.vaultNotFound(path: location.description)) { try vault.set("b", service: "s", account: "a") }
    }

    /// An early insert kept at the lock but never asked for by the transaction's body is
    /// not committed (it would be a row without its manifest term): the commit is refused
    /// with a typed error and the row is not stored. Another test's commit between the
    /// version read and the lock makes the storage undo the insert instead, so this is
    /// tried until the insert is kept.
    @Test func anEarlyInsertTheBodyDidNotAskForIsNeverCommitted() throws {
        let location = try TestServer.location()
        _ = try Vault.create(postgres: location, key: VaultKey.random())
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 5_000)
        let row = StoredRow(lookupID: [UInt8](repeating: 9, count: 32), serviceTag: [UInt8](repeating: 1, count: 32),
                            nonce: [UInt8](repeating: 2, count: 24), sealed: [3])
        let keyCheck = try storage.readMasterKeyCheck()
        var refused = false
        for _ in 0..<200 where !refused {
            try storage.writeTransaction { () throws(StorageError) in try storage.setFormatVersion(VaultHeader.currentFormatVersion) }
            do {
                try storage.writeTransaction(opening: OpeningInsert(row: row, snapshotVersion: storage.snapshotVersion, keyCheck: keyCheck)) { () throws(StorageError) in }
            } catch StorageFailure<StorageError>.storage(let failure) {
                #expect(failure == .corrupted(reason: .unexpectedStorageError))
                refused = true
            }
        }
        #expect(refused)
        let stored = try TestServer.attacker().query("SELECT count(*) FROM vaultkit_items WHERE vault = $1", [.text(location.vaultName)]) { $0.int64(0, 0) }
        #expect(stored == 0)
    }
}
