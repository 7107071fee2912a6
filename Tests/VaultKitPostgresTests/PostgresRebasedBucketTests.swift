import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit
@testable import VaultKitPostgres

/// A `set` whose own bucket another process changed since this one verified it (another
/// item in the same bucket) is rebuilt under the lock on the digest proven there, moved by
/// its own rows' terms (`PreparedSetPlan.rebased(on:)`), while its item's row is the one
/// it was prepared from: two round trips, no write transaction, no read of the bucket.
/// And what the administrator's SQL does to the other rows of that bucket is never folded
/// into the digest the `set` writes: the next verification still reports it.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresRebasedBucketTests {
    /// Two handles on one vault, and two accounts of service "s" in one bucket with their lookup ids.
    static func writersSharingABucket() throws -> (
        a: Vault, aStorage: PostgresVaultStorage, b: Vault, location: PostgresVaultLocation, key: VaultKey,
        mine: String, theirs: String, lookupIDs: [[UInt8]]
    ) {
        let (a, aStorage, location, key) = try TestServer.countedVault()
        let (b, _) = try TestServer.counted(location, key: key)
        let (mine, theirs, lookupIDs) = try PostgresChangedBucketTests.sameBucket(a)
        return (a, aStorage, b, location, key, mine, theirs, lookupIDs)
    }

    /// Rounds of: `a` sets its item, `b` sets the other item of the bucket, `a` sets its
    /// item again. Each `set` of `a` after the first meets `b`'s change in its bucket and
    /// is rebuilt in two round trips, with history kept; the rows `a` keeps for the bucket
    /// stay usable after each (before, each such `set` was a write transaction that read
    /// the bucket under the lock). Every value and version is the one written, and the
    /// manifest is exact.
    @Test func aSetWhoseBucketAnotherWriterChangedIsRebasedOnItsOwnRows() throws {
        let (a, aStorage, b, location, key, mine, theirs, _) = try Self.writersSharingABucket()
        try a.set("mine", service: "s", account: mine)
        try b.set("theirs", service: "s", account: theirs)
        try a.set("mine 0", service: "s", account: mine)
        let transactions = aStorage.writeTransactionsBegun
        var counts: [Int] = []
        for round in 1...5 {
            try b.set("theirs \(round)", service: "s", account: theirs)
            let before = aStorage.connection.roundTrips
            try a.set("mine \(round)", service: "s", account: mine)
            counts.append(aStorage.connection.roundTrips - before)
        }
        #expect(counts == Array(repeating: 2, count: 5))
        #expect(aStorage.writeTransactionsBegun == transactions)
        #expect(try b.string(service: "s", account: mine) == "mine 5")
        #expect(try a.string(service: "s", account: theirs) == "theirs 5")
        let versions = try b.history(service: "s", account: mine)
        #expect(try versions.map { try b.itemWithSecret(service: "s", account: mine, version: $0.number).secret.string() }
            == ["mine 5", "mine 4", "mine 3", "mine 2", "mine 1", "mine 0", "mine"])
        #expect(try Vault.open(postgres: location, key: key).verify() >= 2)
    }

    /// `b` rewrote the item itself: the row `a` prepared from is no longer in its place,
    /// so the storage refuses the rebuilt `set` (its digest would remove the wrong row's
    /// term) and it runs as a write transaction. With history, both earlier values are
    /// kept as versions. (Without history the item's nonce is all that refuses it; with
    /// history the kept version's number, already taken by `b`'s, does too.)
    @Test(arguments: [false, true])
    func aSetOverAnItemAnotherWriterRewroteFallsBack(keepHistory: Bool) throws {
        let (a, aStorage, b, location, key, mine, theirs, _) = try Self.writersSharingABucket()
        try a.set("theirs", service: "s", account: theirs)
        try a.set("one", service: "s", account: mine, keepHistory: keepHistory)
        try b.set("two", service: "s", account: mine, keepHistory: keepHistory)
        let transactions = aStorage.writeTransactionsBegun
        try a.set("three", service: "s", account: mine, keepHistory: keepHistory)
        #expect(aStorage.writeTransactionsBegun == transactions + 1)
        let versions = try b.history(service: "s", account: mine)
        #expect(try versions.map { try b.itemWithSecret(service: "s", account: mine, version: $0.number).secret.string() }
            == (keepHistory ? ["three", "two", "one"] : ["three"]))
        #expect(try Vault.open(postgres: location, key: key).verify() == 2)
    }

    /// What the administrator does with SQL to the shared bucket, between `b`'s commit
    /// there and `a`'s next `set` of its own item (the header and digests left alone).
    enum Edit: CaseIterable, Sendable {
        /// The item `b` added deleted again.
        case theirsDeleted
        /// `b`'s item put back to its older row.
        case theirsPutBack
        /// `a`'s own item, which `b` then overwrote, put back to the row `a` wrote (the
        /// one `a` keeps): the storage finds `a`'s nonce in the item's place.
        case minePutBack
    }

    /// `a`'s `set` is rebuilt and committed, and the edit is never folded into the digest it
    /// writes: a new handle's read of the edited item and its `verify()` say `tampered`,
    /// and so does `a`'s read of `b`'s item; no read returns an older secret or nothing.
    @Test(arguments: Edit.allCases)
    func anEditBesideARebasedSetStaysDetected(_ edit: Edit) throws {
        let (a, aStorage, b, location, key, mine, theirs, lookupIDs) = try Self.writersSharingABucket()
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        func row(_ lookupID: [UInt8]) throws -> (nonce: [UInt8], sealed: [UInt8]) {
            try attacker.query("SELECT nonce, sealed FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(lookupID)]) {
                ($0.array(0, 0), $0.array(0, 1))
            }
        }
        func putBack(_ lookupID: [UInt8], _ old: (nonce: [UInt8], sealed: [UInt8])) throws {
            #expect(try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                        [name, .bytes(lookupID), .bytes(old.nonce), .bytes(old.sealed)]) == 1)
        }
        try a.set("mine", service: "s", account: mine, keepHistory: false)
        if edit == .theirsPutBack { try a.set("theirs, old", service: "s", account: theirs, keepHistory: false) }
        let (mineRow, theirsRow) = (try row(lookupIDs[0]), edit == .theirsPutBack ? try row(lookupIDs[1]) : nil)
        // `a` verifies and keeps the bucket, then `b` changes it.
        #expect(try a.string(service: "s", account: mine) == "mine")
        switch edit {
        case .theirsDeleted:
            try b.set("theirs, added", service: "s", account: theirs, keepHistory: false)
            #expect(try attacker.change("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(lookupIDs[1])]) == 1)
        case .theirsPutBack:
            try b.set("theirs, new", service: "s", account: theirs, keepHistory: false)
            try putBack(lookupIDs[1], try #require(theirsRow))
        case .minePutBack:
            try b.set("mine, by b", service: "s", account: mine, keepHistory: false)
            try putBack(lookupIDs[0], mineRow)
        }
        // Rebuilt on the digest proven under the lock, and committed: the edit stays a
        // mismatch in that digest (the `set` itself does not read the bucket).
        let transactions = aStorage.writeTransactionsBegun
        try a.set("mine, again", service: "s", account: mine, keepHistory: false)
        #expect(aStorage.writeTransactionsBegun == transactions)
        let edited = edit == .minePutBack ? mine : theirs
        let (reader, _) = try TestServer.counted(location, key: key)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { _ = try reader.string(service: "s", account: edited) }
        if edit == .minePutBack {
            // The row `a` just wrote there, read back by `a`, is its own write.
            do { #expect(try a.string(service: "s", account: mine) == "mine, again") } catch { #expect(error.code == .tampered) }
        } else {
            #expect(throws: VaultError.tampered(reason: .rowsChanged)) { _ = try a.string(service: "s", account: theirs) }
        }
        let error = try #require(throws: VaultError.self) { try Vault.open(postgres: location, key: key).verify() }
        #expect(error.code == .tampered)
    }

    /// `minePutBack` with history on: `b`'s `set` kept `a`'s row as a version, so the
    /// version `a`'s rebuilt `set` would keep takes a number already taken, the server
    /// refuses it, and the write transaction that follows reads the bucket and reports the
    /// put-back before writing anything.
    @Test func aPutBackOfTheSetsOwnRowWithHistoryIsRefused() throws {
        let (a, _, b, location, _, mine, _, lookupIDs) = try Self.writersSharingABucket()
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        try a.set("one", service: "s", account: mine)
        try a.set("mine", service: "s", account: mine)
        let mineRow = try attacker.query("SELECT nonce, sealed FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(lookupIDs[0])]) {
            ($0.array(0, 0), $0.array(0, 1))
        }
        try b.set("mine, by b", service: "s", account: mine)
        #expect(try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                    [name, .bytes(lookupIDs[0]), .bytes(mineRow.0), .bytes(mineRow.1)]) == 1)
        let generation = { () throws -> Int64 in
            try attacker.query("SELECT generation FROM vaultkit_header WHERE vault = $1", [name]) { $0.int64(0, 0) }
        }
        let before = try generation()
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try a.set("mine, again", service: "s", account: mine) }
        #expect(try generation() == before)
    }
}
