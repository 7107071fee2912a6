import VaultKit

/// The manifest: its root, tag and the generation in the header row, and the bucket
/// digests, which a transaction keeps in ``PostgresVaultStorage/manifestCache`` while
/// they describe what it reads.
extension PostgresVaultStorage {
    package func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return (row.manifestRoot, row.manifestTag)
        }
    }

    package func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        transaction.updateWrite { $0.generationWritten = generation }
        try write(changingHeader: true, PostgresSQL.writeManifestRoot,
                  [.text(vault), .bytes(root.bytes), .bytes(tag.bytes), .int64(Int64(bitPattern: generation))])
    }

    package func readGeneration() throws(StorageError) -> UInt64 {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.generationMissing }
            return try row.generation()
        }
    }

    package func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        let usable = manifestCacheUsable
        if usable, let known = manifestCache.digest(bucket) { return known }
        return try run { () throws in
            let digest = try connection.query(PostgresSQL.manifestDigest, [.text(vault), .int64(Int64(bucket))]) { rows in
                rows.count > 0 ? rows.array(0, 0) : nil
            }
            if usable { manifestCache.record(bucket, digest) }
            return digest
        }
    }

    package func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        transaction.updateWrite { $0.changedBuckets?.insert(bucket) }
        if manifestCacheUsable { manifestCache.record(bucket, digest.isZero ? nil : digest.bytes) }
        if digest.isZero {
            try write(PostgresSQL.deleteManifestDigest, [.text(vault), .int64(Int64(bucket))])
        } else {
            try write(PostgresSQL.upsertManifestDigest, [.text(vault), .int64(Int64(bucket)), .bytes(digest.bytes)])
        }
    }

    package func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let usable = manifestCacheUsable
        try passing(BodyError.self) {
            try connection.query(PostgresSQL.allManifestDigests, [.text(vault)]) { rows in
                var all: [Int: [UInt8]] = [:]
                manifestRowsRead += rows.count
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.int64(row, 0), rows.bytes(row, 1)) }
                    if usable { all[Int(rows.int64(row, 0))] = rows.array(row, 1) }
                }
                // Kept once the engine accepted every row.
                if usable { manifestCache.recordAll(all) }
            }
        }
    }

    /// The state this transaction read: the generation of the header row it read, with the
    /// change marker (authentic once the engine verified that row's tag); else the header
    /// row's `xmin` (``PostgresRowVersions``). A storage keeps one kind for its life, and a
    /// mark of the other kind could only cost a full read (the engine's sum decides).
    package var manifestMark: Int64? {
        guard transaction.inTransaction else { return nil }
        if changeMarkers {
            guard let row = transaction.headerRow, let generation = try? row.generation() else { return nil }
            return Int64(bitPattern: generation)
        }
        guard let header = rowVersions.headerXmin else { return nil }
        return Int64(header)
    }

    /// The mark of the state an own commit made (``manifestMarkOfLastCommit``): with the
    /// change marker, the generation it wrote; else its header row's `xmin`, which is the
    /// committing transaction's id (its rows are not younger than that, so not listed).
    /// `nil` when it wrote no root.
    func markOfOwnCommit(generation: UInt64?, ownXmin: UInt32?) -> Int64? {
        guard let generation else { return nil }
        if changeMarkers { return Int64(bitPattern: generation) }
        return ownXmin.map { Int64($0) }
    }

    /// With the change marker: the buckets marked by a commit of a later generation than
    /// `mark` (every engine writer records the buckets it changes, under the header lock,
    /// so in commit order), each with its digest or none. Without it: the bucket rows
    /// whose `xmin` is younger than the header's at `mark` (every engine writer after that
    /// state took the header row's lock after its writer committed, so got a younger
    /// transaction id; a row deleted, or written by an older transaction, is not listed).
    /// Either way a hint: a change it misses (a writer of an earlier release writes no
    /// marker) or makes up is caught by the engine's sum, which then reads every bucket
    /// (FORMAT.md section 13.1).
    package func manifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) -> [(bucket: Int64, digest: [UInt8]?)]? {
        guard transaction.inTransaction, let (sql, parameters) = changedBucketsQuery(since: mark, including: bucket) else { return nil }
        let listed = try run { () throws -> [(bucket: Int64, digest: [UInt8]?)] in
            if case .reading(let read) = transaction, let prefetch = read.prefetch, prefetch.mark == mark, prefetch.bucket == bucket {
                // Asked for ahead, in this snapshot: answered with the first statement.
                if prefetch.rows == nil, connection.queuedCount > 0 { try connection.flush() }
                if case .reading(let answered) = transaction, let rows = answered.prefetch?.rows { return rows }
            }
            if case .writing(let write) = transaction, let listed = write.listed, listed.mark == mark, bucket == nil {
                // Listed with the lock, which no writer has released since.
                return listed.rows
            }
            return try connection.query(sql, parameters) { Self.changedBuckets($0) }
        }
        manifestRowsRead += listed.count
        if manifestCacheUsable {
            for (bucket, digest) in listed { manifestCache.record(Int(bucket), digest) }
            // Not listed: `bucket` has no row (what a write into it then reads).
            if let bucket, !listed.contains(where: { $0.0 == Int64(bucket) }) { manifestCache.record(bucket, nil) }
        }
        return listed
    }

    /// In a read transaction whose first statement is not sent yet, queues
    /// ``manifestBuckets(changedSince:including:)``'s statement behind it, so it travels in
    /// the same round trip (``pinSnapshot()`` sends them); its answer is kept for that call.
    /// Once the first statement is sent nothing is queued: a statement left queued when the
    /// transaction ends would keep its `COMMIT` from being sent.
    package func prefetchManifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) {
        guard case .reading(let read) = transaction, read.first == nil, connection.queuedCount > 0,
              let (sql, parameters) = changedBucketsQuery(since: mark, including: bucket) else { return }
        try run { () throws in
            transaction.updateRead { $0.prefetch = (mark, bucket, nil) }
            try connection.enqueue(sql, parameters) { [unowned self] rows in
                let listed = Self.changedBuckets(rows)
                transaction.updateRead { read in
                    if read.prefetch?.mark == mark, read.prefetch?.bucket == bucket { read.prefetch?.rows = listed }
                }
            }
        }
    }

    /// The statement listing the buckets changed since `mark`, as this storage names states.
    func changedBucketsQuery(since mark: Int64, including bucket: Int?) -> (String, [PostgresConnection.Parameter])? {
        let including: PostgresConnection.Parameter = bucket.map { .int64(Int64($0)) } ?? .nullInt64
        if changeMarkers { return (PostgresSQL.manifestDigestsChangedSinceGeneration, [.text(vault), .int64(mark), including]) }
        guard let xid = UInt32(exactly: mark) else { return nil }
        return (PostgresSQL.manifestDigestsChangedSince, [.text(vault), .text(String(xid)), including])
    }

    static func changedBuckets(_ rows: PostgresRows) -> [(bucket: Int64, digest: [UInt8]?)] {
        (0..<rows.count).map { row in (rows.int64(row, 0), rows.isNull(row, 1) ? nil : rows.array(row, 1)) }
    }

    package func carryVerifiedBuckets(unchanged: [Int], changed: [Int]) -> [Int] {
        rowVersions.carry(unchanged: unchanged, changed: changed)
    }

    package func deleteAllManifestBuckets() throws(StorageError) {
        transaction.updateWrite { $0.changedBuckets = nil }
        if manifestCacheUsable { manifestCache.removeAll() }
        try write(PostgresSQL.deleteAllManifestDigests, [.text(vault)])
    }

    /// Queues the change markers of the buckets `buckets` (`nil`: every bucket) for the
    /// commit of `generation`, in the transaction in progress, if the tables have them.
    /// Without a generation (no root written) nothing is marked: a reader then misses the
    /// change, its sum does not match, and it reads every bucket.
    func enqueueChangeMarkers(_ buckets: Set<Int>?, generation: UInt64?) throws {
        guard changeMarkers, let generation else { return }
        let marked = buckets.map { $0.sorted() } ?? Array(0..<PostgresRowVersions.bucketCount)
        guard !marked.isEmpty else { return }
        try connection.enqueue(PostgresSQL.markChanges, [.text(vault), .int64Array(marked.map(Int64.init)), .int64(Int64(bitPattern: generation))])
    }
}
