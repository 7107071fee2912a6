import VaultKit

/// The guarantees of ``VaultStorage``'s contract, checked on the storage itself rather
/// than through a ``Vault``: each check is one guarantee, and each has a storage in the
/// tests that breaks it and a test that sees the check fail (Tests/VaultKitTests/StorageSeam).
///
/// A check that does not hold throws ``ConformanceFailure`` naming it.
package enum StorageContract {
    /// Connections to one storage that holds a newly created vault.
    package struct Fixture {
        /// A new connection each call, whose write waits for another connection's
        /// write lock only briefly (so a held lock is reported as busy, not waited out).
        package let connect: () throws -> any VaultStorage

        package init(connect: @escaping () throws -> any VaultStorage) {
            self.connect = connect
        }
    }

    /// Every guarantee, so that each engine's test target runs them all.
    package enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        case scansVisitRowsInLookupIDOrder
        case snapshotVersionMovesOnEveryCommitAndOnlyThen
        case theWriteLockIsExclusive
        case aWriteTransactionReadsItsOwnWrites
        case aThrowingBodyRollsEverythingBack
        case otherConnectionsSeeOnlyCommittedWrites
        case rowsAreUniqueByLookupID
        case anEmptyBucketIsStoredAsNone

        package var description: String { rawValue }

        package func run(_ fixture: Fixture) throws {
            switch self {
            case .scansVisitRowsInLookupIDOrder: try StorageContract.scansVisitRowsInLookupIDOrder(fixture)
            case .snapshotVersionMovesOnEveryCommitAndOnlyThen: try StorageContract.snapshotVersionMovesOnEveryCommitAndOnlyThen(fixture)
            case .theWriteLockIsExclusive: try StorageContract.theWriteLockIsExclusive(fixture)
            case .aWriteTransactionReadsItsOwnWrites: try StorageContract.aWriteTransactionReadsItsOwnWrites(fixture)
            case .aThrowingBodyRollsEverythingBack: try StorageContract.aThrowingBodyRollsEverythingBack(fixture)
            case .otherConnectionsSeeOnlyCommittedWrites: try StorageContract.otherConnectionsSeeOnlyCommittedWrites(fixture)
            case .rowsAreUniqueByLookupID: try StorageContract.rowsAreUniqueByLookupID(fixture)
            case .anEmptyBucketIsStoredAsNone: try StorageContract.anEmptyBucketIsStoredAsNone(fixture)
            }
        }
    }

    /// `forEachRowIdentity` visits rows in ascending lookup id order (bytes compared
    /// unsigned, as `memcmp`), whole or within a range, whatever order they were written in.
    static func scansVisitRowsInLookupIDOrder(_ fixture: Fixture) throws {
        let storage = try fixture.connect()
        let firstBytes: [UInt8] = [0x80, 0x01, 0xff, 0x00, 0x7f, 0x81, 0x10]
        try write(storage) {
            for first in firstBytes { try insert(storage, row(first)) }
        }
        let all = try identities(storage, in: nil)
        try check(all == firstBytes.sorted().map { id($0) }, "rows visited in lookup id order, bytes unsigned: \(all.map { $0[0] })")
        let ranged = try identities(storage, in: (lower: id(0x10), upper: id(0x81)))
        try check(ranged == [0x10, 0x7f, 0x80].map { id($0) }, "a range keeps its lower bound, drops its upper, in order: \(ranged.map { $0[0] })")
        let open = try identities(storage, in: (lower: id(0x80), upper: nil))
        try check(open == [0x80, 0x81, 0xff].map { id($0) }, "a range without an upper bound runs to the last row: \(open.map { $0[0] })")
    }

    /// `snapshotVersion` changes with every commit that writes the header, this
    /// connection's and (once read) another's, and stays put while nothing commits: the
    /// engine keeps what it verified for exactly as long as the version is the same. Every
    /// engine write rewrites the header, so the other connection's commit here does too; a
    /// commit of item rows alone (an attacker's) is the storage's to report on the next
    /// read of those rows (PostgreSQL: `PostgresRowVersionTests`).
    static func snapshotVersionMovesOnEveryCommitAndOnlyThen(_ fixture: Fixture) throws {
        let storage = try fixture.connect()
        let other = try fixture.connect()
        var seen = [try pinnedVersion(storage)]
        try check(try pinnedVersion(storage) == seen[0], "the version stays put while nothing commits")
        for step in UInt8(0)..<5 {
            try write(storage) { try insert(storage, row(step)) }
            let version = try pinnedVersion(storage)
            try check(!seen.contains(version), "the version moves on this connection's commit \(step)")
            seen.append(version)
            try write(other) {
                _ = try other.delete(lookupID: id(step))
                try other.updateKeyWrapping(try other.readHeader())
            }
            let afterOther = try pinnedVersion(storage)
            try check(!seen.contains(afterOther), "the version moves on another connection's commit \(step)")
            seen.append(afterOther)
        }
        try check(try pinnedVersion(storage) == seen.last, "the version stays put again")
    }

    /// While one connection holds the write lock, another cannot take it: its write
    /// transaction fails as busy and its body never runs.
    static func theWriteLockIsExclusive(_ fixture: Fixture) throws {
        let holder = try fixture.connect()
        let contender = try fixture.connect()
        var contenderRan = false
        var outcome: StorageError?
        try write(holder) {
            try insert(holder, row(1))
            do {
                try contender.writeTransaction { () throws(any Error) in
                    contenderRan = true
                    try insert(contender, row(2))
                }
            } catch StorageFailure<any Error>.storage(let error) {
                outcome = error
            }
        }
        try check(!contenderRan, "a second writer's body does not run while the lock is held")
        guard case .busy? = outcome else { throw ConformanceFailure("a second writer fails as busy while the lock is held, got \(outcome.map { "\($0)" } ?? "success")") }
        try check(try identities(contender, in: nil) == [id(1)], "only the lock holder's write is stored")
        try write(contender) { try insert(contender, row(2)) }
        try check(try identities(holder, in: nil) == [id(1), id(2)], "the lock is free after the holder commits")
    }

    /// Inside a write transaction, every read sees the transaction's own writes: rows,
    /// header, manifest root and generation, buckets and host wraps (a second `add` in
    /// one batch must see the first).
    static func aWriteTransactionReadsItsOwnWrites(_ fixture: Fixture) throws {
        let storage = try fixture.connect()
        let header = try storage.readTransaction { () throws(StorageError) in try storage.readHeader() }
        var newHeader = header
        newHeader.masterKeyCheck = Array(repeating: 0x5a, count: header.masterKeyCheck.count)
        let wraps = [StoredHostWrap(name: "h", publicKey: Array(repeating: 1, count: 32), sealedMasterKey: Array(repeating: 2, count: 80))]
        try write(storage) {
            try insert(storage, row(1))
            try check(try sealed(storage, id(1)) == row(1).sealed, "a row inserted is read back in its transaction")
            try check(try !inserting(storage, row(1, sealedByte: 9)), "a second insert of the same id sees the first")
            try upsert(storage, row(1, sealedByte: 7))
            try check(try sealed(storage, id(1)) == row(1, sealedByte: 7).sealed, "a row replaced is read back replaced")
            try insert(storage, row(2))
            try check(try identities(storage, in: nil) == [id(1), id(2)], "a scan sees the transaction's rows")
            try check(try rows(storage).count == 2, "a row listing sees the transaction's rows")
            try check(try storage.delete(lookupID: id(2)) != nil, "a delete finds the transaction's row")
            try check(try sealed(storage, id(2)) == nil, "a row deleted is gone in its transaction")
            try storage.writeManifestRoot(digest(3), tag: digest(4), generation: 77)
            try check(try storage.readGeneration() == 77, "the generation written is read back")
            try check(try storage.readManifestRoot().root == Array(repeating: 3, count: 32), "the root written is read back")
            try storage.setManifestDigest(bucket: 5, digest(6))
            try check(try storage.manifestDigest(bucket: 5) == Array(repeating: 6, count: 32), "a bucket digest written is read back")
            try storage.updateKeyWrapping(newHeader)
            try check(try storage.readMasterKeyCheck() == newHeader.masterKeyCheck, "a key wrapping written is read back")
            try storage.replaceHostWraps(wraps)
            try check(try storage.readHostWraps() == wraps, "host wraps written are read back")
        }
        try check(try storage.readTransaction { () throws(StorageError) in try storage.readGeneration() } == 77, "and are committed")
    }

    /// A write transaction whose body throws leaves nothing behind, on this connection
    /// or any other, and its error comes back unchanged.
    static func aThrowingBodyRollsEverythingBack(_ fixture: Fixture) throws {
        struct Abort: Error {}
        let storage = try fixture.connect()
        try write(storage) { try insert(storage, row(1)) }
        let before = try state(storage)
        do {
            try storage.writeTransaction { () throws(any Error) in
                try insert(storage, row(2))
                try upsert(storage, row(1, sealedByte: 8))
                try storage.setManifestDigest(bucket: 3, digest(9))
                try storage.writeManifestRoot(digest(1), tag: digest(2), generation: 99)
                try storage.replaceHostWraps([StoredHostWrap(name: "h", publicKey: Array(repeating: 1, count: 32), sealedMasterKey: Array(repeating: 2, count: 80))])
                throw Abort()
            }
            throw ConformanceFailure("the aborted transaction returned")
        } catch StorageFailure<any Error>.body(let error) {
            try check(error is Abort, "the body's own error comes back unchanged")
        }
        try check(try state(storage) == before, "nothing of the aborted transaction is left on its connection")
        try check(try state(fixture.connect()) == before, "nothing of the aborted transaction reaches another connection")
    }

    /// Another connection never sees a write transaction's changes before it commits,
    /// and sees them all after.
    static func otherConnectionsSeeOnlyCommittedWrites(_ fixture: Fixture) throws {
        let writer = try fixture.connect()
        let reader = try fixture.connect()
        let before = try state(reader)
        try write(writer) {
            try insert(writer, row(1))
            try writer.writeManifestRoot(digest(1), tag: digest(2), generation: 42)
            try check(try state(reader) == before, "an uncommitted write is not seen by another connection")
        }
        try check(try identities(reader, in: nil) == [id(1)], "the committed row is seen by another connection")
        try check(try reader.readTransaction { () throws(StorageError) in try reader.readGeneration() } == 42, "the committed generation is seen by another connection")
    }

    /// One row per lookup id: an insert where one exists does nothing and says so; an
    /// upsert replaces it.
    static func rowsAreUniqueByLookupID(_ fixture: Fixture) throws {
        let storage = try fixture.connect()
        try write(storage) {
            try check(try inserting(storage, row(1)), "the first insert inserts")
            try check(try !inserting(storage, row(1, sealedByte: 5)), "a second insert of the id does not")
            try upsert(storage, row(1, sealedByte: 6))
        }
        try check(try rows(storage).map(\.sealed) == [row(1, sealedByte: 6).sealed], "one row, the upserted one")
    }

    /// A bucket whose digest is all zeros (no rows) has no stored digest, and the host
    /// wraps say "never had one" (`nil`) apart from "none left" (`[]`).
    static func anEmptyBucketIsStoredAsNone(_ fixture: Fixture) throws {
        let storage = try fixture.connect()
        try write(storage) {
            try storage.setManifestDigest(bucket: 2, digest(1))
            try storage.setManifestDigest(bucket: 2, .zero)
            try check(try storage.manifestDigest(bucket: 2) == nil, "an all-zero digest is stored as none")
            var buckets: [Int64] = []
            try storage.forEachManifestBucket { bucket, _ in buckets.append(bucket) }
            try check(!buckets.contains(2), "no stored bucket for the empty one")
            try check(try storage.readHostWraps() == nil, "no host wraps before the first")
            try storage.replaceHostWraps([])
            try check(try storage.readHostWraps() == [], "an empty list after the last is removed")
        }
    }

    // MARK: Rows and reads

    static func id(_ first: UInt8) -> [UInt8] { [first] + Array(repeating: 0x33, count: 31) }

    static func row(_ first: UInt8, sealedByte: UInt8 = 1) -> StoredRow {
        StoredRow(lookupID: id(first), serviceTag: Array(repeating: 0x44, count: 32), nonce: Array(repeating: first, count: 24), sealed: Array(repeating: sealedByte, count: 40))
    }

    static func digest(_ byte: UInt8) -> ManifestDigest {
        Array(repeating: byte, count: 32).withUnsafeBytes { ManifestDigest(bytes: $0)! }
    }

    static func insert(_ storage: any VaultStorage, _ row: StoredRow) throws {
        try check(try inserting(storage, row), "the row was inserted")
    }

    static func inserting(_ storage: any VaultStorage, _ row: StoredRow) throws -> Bool {
        try row.nonce.withUnsafeBytes { nonce in try storage.insertIfAbsent(lookupID: row.lookupID, serviceTag: row.serviceTag, nonce: nonce, sealed: row.sealed) }
    }

    static func upsert(_ storage: any VaultStorage, _ row: StoredRow) throws {
        try row.nonce.withUnsafeBytes { nonce in try storage.upsert(lookupID: row.lookupID, serviceTag: row.serviceTag, nonce: nonce, sealed: row.sealed) }
    }

    static func sealed(_ storage: any VaultStorage, _ lookupID: [UInt8]) throws -> [UInt8]? {
        try storage.withSealedItem(lookupID: lookupID) { _, _, sealed in Array(sealed) }
    }

    static func rows(_ storage: any VaultStorage) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try storage.forEachRow(serviceTag: nil) { rows.append($0) }
        return rows
    }

    static func identities(_ storage: any VaultStorage, in range: (lower: [UInt8], upper: [UInt8]?)?) throws -> [[UInt8]] {
        try storage.readTransaction { () throws(any Error) in
            var ids: [[UInt8]] = []
            try storage.forEachRowIdentity(in: range) { id, _, _ in ids.append(Array(id)) }
            return ids
        }
    }

    /// The version of a new read snapshot, as the engine takes one.
    static func pinnedVersion(_ storage: any VaultStorage) throws -> Int64 {
        try storage.readTransaction { () throws(StorageError) in
            try storage.pinSnapshot()
            return storage.snapshotVersion
        }
    }

    /// What a storage holds, compared whole.
    struct State: Equatable {
        var rows: [[UInt8]]
        var root: [UInt8]?
        var tag: [UInt8]?
        var generation: UInt64
        var buckets: [[UInt8]]
        var hostWraps: [StoredHostWrap]?
    }

    static func state(_ storage: any VaultStorage) throws -> State {
        try storage.readTransaction { () throws(any Error) in
            var buckets: [[UInt8]] = []
            try storage.forEachManifestBucket { bucket, digest in buckets.append([UInt8(truncatingIfNeeded: bucket)] + Array(digest)) }
            let (root, tag) = try storage.readManifestRoot()
            return State(
                rows: try rows(storage).sorted { $0.lookupID.lexicographicallyPrecedes($1.lookupID) }.map { $0.lookupID + $0.nonce + $0.sealed },
                root: root, tag: tag, generation: try storage.readGeneration(),
                buckets: buckets.sorted { $0.lexicographicallyPrecedes($1) }, hostWraps: try storage.readHostWraps()
            )
        }
    }

    static func write(_ storage: any VaultStorage, _ body: () throws -> Void) throws {
        do {
            try storage.writeTransaction { () throws(any Error) in try body() }
        } catch StorageFailure<any Error>.body(let error) {
            throw error
        } catch StorageFailure<any Error>.storage(let error) {
            throw error
        }
    }

    static func check(_ condition: @autoclosure () throws -> Bool, _ what: String) throws {
        guard try condition() else { throw ConformanceFailure(what) }
    }
}
