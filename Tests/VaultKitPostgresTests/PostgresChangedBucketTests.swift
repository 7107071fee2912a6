import Testing
import TestTraits
import TestSupport
@testable import VaultKit
@testable import VaultKitPostgres

/// A bucket another process wrote into, met by a reader that had verified it: the rows
/// still at the versions the reader verified are read without the bucket
/// (``PostgresRowVersions/carry(unchanged:changed:)``), and what the administrator's SQL
/// does there is still caught by the next read of the row it touched.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresChangedBucketTests {
    /// Two accounts of service "s" whose rows fall in one manifest bucket, and that bucket.
    static func sameBucket(_ vault: Vault) throws -> (first: String, second: String, lookupIDs: [[UInt8]]) {
        // Among 2,000 accounts in 1,024 buckets some two always share one.
        let lookupIDs = try vault.withUnlocked { (unlocked) throws(VaultError) in
            (0..<2_000).map { unlocked.keys.lookupID(service: "s", account: "a\($0)") }
        }
        var seen: [Int: Int] = [:]
        for (index, lookupID) in lookupIDs.enumerated() {
            if let earlier = seen[Manifest.bucket(of: lookupID)] {
                return ("a\(earlier)", "a\(index)", [lookupIDs[earlier], lookupID])
            }
            seen[Manifest.bucket(of: lookupID)] = index
        }
        throw VaultError.itemNotFound
    }

    /// Another writer changes one row of a bucket the reader verified: the reader's next
    /// `get` of another row there verifies the new root and confirms the row by its
    /// version, in the read transaction's one round trip, without reading the bucket.
    @Test func aRowAnotherWriterLeftAloneIsReadWithoutItsBucket() throws {
        let (writer, _, location, key) = try TestServer.countedVault()
        let (first, second, _) = try Self.sameBucket(writer)
        try writer.set("one", service: "s", account: first)
        try writer.set("two", service: "s", account: second)
        let (reader, storage) = try TestServer.counted(location, key: key)
        #expect(try reader.string(service: "s", account: first) == "one")
        #expect(try reader.string(service: "s", account: second) == "two")
        try writer.set("two, again", service: "s", account: second)
        let before = storage.connection.roundTrips
        #expect(try reader.string(service: "s", account: first) == "one")
        // The lone read that finds the vault moved, then the read transaction's first round trip.
        #expect(storage.connection.roundTrips - before == 2)
        let then = storage.connection.roundTrips
        #expect(try reader.string(service: "s", account: first) == "one")
        #expect(storage.connection.roundTrips - then == 1)
        #expect(try reader.string(service: "s", account: second) == "two, again")
        #expect(try reader.verify() == 2)
    }

    /// What the administrator does with SQL (the header row left alone) to the row of an
    /// item in a bucket another writer changed since the reader verified it.
    enum Edit: CaseIterable, Sendable {
        /// The item's older row put back over the current one (a new row version).
        case putBack
        /// The item's row deleted.
        case deleted
        /// An item the other writer added, deleted again: the reader had verified there
        /// was no row, and there is none now, but the bucket's digest says there is.
        case addedThenDeleted
    }

    /// The reader verified the bucket (both rows, or one row and the other's absence);
    /// the other writer changes the bucket; the administrator edits the item's row. The
    /// reader's next `get` of it is `tampered`, never the older secret or `itemNotFound`.
    @Test(arguments: Edit.allCases)
    func anEditInABucketAnotherWriterChangedIsCaughtByTheNextGet(_ edit: Edit) throws {
        let (writer, _, location, key) = try TestServer.countedVault()
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        let (first, second, lookupIDs) = try Self.sameBucket(writer)
        try writer.set("kept", service: "s", account: first)
        if edit != .addedThenDeleted { try writer.set("old", service: "s", account: second) }
        let old = try attacker.query("SELECT nonce, sealed FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(lookupIDs[1])]) { rows in
            rows.count > 0 ? (nonce: rows.array(0, 0), sealed: rows.array(0, 1)) : nil
        }
        if edit == .putBack { try writer.set("new", service: "s", account: second) }
        let (reader, _) = try TestServer.counted(location, key: key)
        func secondItem() throws(VaultError) -> String? {
            do { return try reader.string(service: "s", account: second) } catch .itemNotFound { return nil }
        }
        #expect(try reader.string(service: "s", account: first) == "kept")
        #expect(try secondItem() == [.putBack: "new", .deleted: "old"][edit])
        // The other writer changes the bucket: the row in question, or (to leave it as the
        // reader verified it) the other one.
        switch edit {
        case .putBack, .deleted: try writer.set("moved", service: "s", account: first, keepHistory: false)
        case .addedThenDeleted: try writer.set("added", service: "s", account: second)
        }
        switch edit {
        case .putBack:
            let old = try #require(old)
            _ = try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                    [name, .bytes(lookupIDs[1]), .bytes(old.nonce), .bytes(old.sealed)])
        case .deleted, .addedThenDeleted:
            #expect(try attacker.change("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(lookupIDs[1])]) == 1)
        }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try secondItem() }
    }
}
