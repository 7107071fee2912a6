import Foundation
import StorageConformance
import Testing
import TestTraits
import TestSupport
import VaultKit
@testable import VaultKitPostgres

/// Another process's commit moves the root: a reader checks the new root from the bucket
/// rows written since it last verified (their `xmin`), not from all of them, and keeps the
/// buckets whose digests did not change verified for lone reads (docs/FORMAT.md 13.1).
/// The list of changed rows is only an optimisation: a digest row changed, deleted or
/// written by an old transaction is still `tampered`.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresIncrementalRootTests {
    static let accounts = TestServer.readerAccounts


    /// The lookup id of the row written last (by `xmin`), as an administrator sees it.
    static func newestRow(_ location: PostgresVaultLocation) throws -> [UInt8] {
        try TestServer.attacker().query(
            "SELECT lookup_id FROM vaultkit_items WHERE vault = $1 ORDER BY age(xmin) LIMIT 1", [.text(location.vaultName)]
        ) { $0.array(0, 0) }
    }

    static func bucket(of lookupID: [UInt8]) -> Int64 { Int64(lookupID[0]) << 2 | Int64(lookupID[1]) >> 6 }

    /// Before, the first read after another process's write read every bucket row (about
    /// 40 here, 1,024 in a big vault) and every later read of a bucket not yet verified
    /// again verified it (about five round trips each); now the changed rows only, and
    /// reads of the buckets left unchanged are one round trip each.
    @Test func anotherWritersCommitCostsOnlyTheRowsItChanged() throws {
        let (reader, storage, writer, _) = try TestServer.verifiedReader()
        try writer.set("changed", service: "s", account: "a0")
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        // The changed buckets' rows (the item's and its kept version's), and the read bucket's own.
        #expect(storage.manifestRowsRead - rowsBefore <= 3)
        let tripsBefore = storage.connection.roundTrips
        for account in Self.accounts.dropFirst(2) {
            #expect(try reader.string(service: "s", account: account) == "v-" + account)
        }
        // One each, and a few more for a read that shares the changed bucket.
        #expect(storage.connection.roundTrips - tripsBefore <= Self.accounts.count - 2 + 6)
        #expect(try reader.string(service: "s", account: "a0") == "changed")
        #expect(storage.manifestRowsRead - rowsBefore <= 5)
    }

    /// A digest row the administrator changed: by row versions it is among the rows written
    /// since (its `xmin` is new), the sum no longer matches the tagged root, the reader reads
    /// every bucket, and the vault is `tampered`, whichever bucket the read is in. With the
    /// change marker (which the administrator did not write) it is not listed: the proven
    /// digest stands in for it, so the read returns the committed row, and the edit is
    /// reported when its bucket is verified (here by `verify()`).
    @Test(arguments: [false, true])
    func aDigestChangedBesideAnotherWritersCommitIsTampered(markers: Bool) throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        storage.changeMarkers = markers
        try reader.verify()  // Its mark of that kind.
        try writer.set("changed", service: "s", account: "a0")
        _ = try TestServer.attacker().change(
            "UPDATE vaultkit_manifest SET digest = $2 WHERE vault = $1 AND bucket = (SELECT max(bucket) FROM vaultkit_manifest WHERE vault = $1)",
            [.text(location.vaultName), .bytes((0..<32).map { _ in UInt8.random(in: 1...255) })])
        if markers {
            // Unless the edited bucket is the read's own or the writer's (then `tampered`).
            do {
                #expect(try reader.string(service: "s", account: "a1") == "v-a1")
            } catch {
                #expect(error.code == .tampered)
            }
            let verify = try #require(throws: VaultError.self) { try reader.verify() }
            #expect(verify.code == .tampered)
        } else {
            let error = try #require(throws: VaultError.self) { try reader.string(service: "s", account: "a1") }
            #expect(error.code == .tampered)
        }
    }

    /// A deleted digest row leaves no `xmin`: the bucket it belonged to is verified with
    /// its stored row whatever its age, so a write into it (or `verify()`) is `tampered`;
    /// no read returns a row the proven digests do not account for meanwhile.
    @Test func aDeletedDigestRowIsCaughtWhenItsBucketIsVerified() throws {
        let (reader, _, writer, location) = try TestServer.verifiedReader()
        try reader.set("mine", service: "s", account: "y")
        let bucket = Self.bucket(of: try Self.newestRow(location))
        #expect(try reader.string(service: "s", account: "y") == "mine")
        try writer.set("changed", service: "s", account: "a0")
        _ = try TestServer.attacker().change("DELETE FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2",
                                             [.text(location.vaultName), .int64(bucket)])
        let write = try #require(throws: VaultError.self) { try reader.set("again", service: "s", account: "y") }
        #expect(write.code == .tampered)
        let verify = try #require(throws: VaultError.self) { try reader.verify() }
        #expect(verify.code == .tampered)
    }

    /// A digest row rewritten by a transaction that began before the reader verified (so
    /// its `xmin` looks older than the state the reader knows) is not among the rows
    /// written since; the bucket's stored row is read when the bucket is verified, and
    /// differs from the proven digest: `tampered`.
    @Test func aDigestWrittenByAnOlderTransactionIsCaughtWhenItsBucketIsVerified() throws {
        let location = try TestServer.location()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        let old = try TestServer.attacker()
        try old.execute("BEGIN")
        _ = try old.query("SELECT pg_current_xact_id()::text") { $0.text(0, 0) }
        let key = VaultKey.random()
        let reader = try Vault.create(postgres: location, key: key)
        try reader.batch { batch in
            for account in Self.accounts { try batch.set("v-" + account, service: "s", account: account) }
        }
        // The writer's item and the forged one in different buckets (one item in 1,024 would
        // share it, and the writer would find the forgery first).
        try reader.set("v-a0", service: "s", account: "a0")
        let writersBucket = Self.bucket(of: try Self.newestRow(location))
        var (mine, bucket) = ("", writersBucket)
        for candidate in (0..<8).map({ "y\($0)" }) where bucket == writersBucket {
            try reader.set("mine", service: "s", account: candidate)
            (mine, bucket) = (candidate, Self.bucket(of: try Self.newestRow(location)))
        }
        try reader.verify()
        // Another process, verified before the forgery (one opening after it would read every bucket).
        let writer = try Vault.open(postgres: location, key: key)
        try writer.verify()
        _ = try old.change("UPDATE vaultkit_manifest SET digest = $3 WHERE vault = $1 AND bucket = $2",
                           [name, .int64(bucket), .bytes((0..<32).map { _ in UInt8.random(in: 1...255) })])
        try old.execute("COMMIT")
        try writer.set("changed", service: "s", account: "a0")
        let write = try #require(throws: VaultError.self) { try reader.set("again", service: "s", account: mine) }
        #expect(write.code == .tampered)
        let verify = try #require(throws: VaultError.self) { try reader.verify() }
        #expect(verify.code == .tampered)
    }

    /// An `UPDATE` that writes a digest row's own value gives it a new `xmin` and nothing
    /// else: by row versions it is listed and sums the same, with the change marker it is
    /// not listed at all; either way no tampering.
    @Test(arguments: [false, true])
    func aDigestRowRewrittenWithItsOwnValueIsNoTampering(markers: Bool) throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        storage.changeMarkers = markers
        try reader.verify()  // Its mark of that kind.
        _ = try TestServer.attacker().change("UPDATE vaultkit_manifest SET digest = digest WHERE vault = $1", [.text(location.vaultName)])
        try writer.set("changed", service: "s", account: "a0")
        // Forty items share buckets now and then (about one pair in two runs): count the rows.
        let digestRows = try TestServer.attacker().query(
            "SELECT count(*) FROM vaultkit_manifest WHERE vault = $1", [.text(location.vaultName)]
        ) { Int($0.int64(0, 0)) }
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        if markers {
            // The writer's buckets and the read's own.
            #expect(storage.manifestRowsRead - rowsBefore <= 3)
        } else {
            // Every rewritten row is listed as changed (its `xmin` is new).
            #expect(storage.manifestRowsRead - rowsBefore >= digestRows)
        }
        try reader.verify()
    }
}
