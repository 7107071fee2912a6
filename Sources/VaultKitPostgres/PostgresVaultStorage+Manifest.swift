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

    /// The header row's `xmin` in the vault state this transaction read (``PostgresRowVersions``).
    package var manifestMark: Int64? {
        guard transaction.inTransaction, let header = rowVersions.headerXmin else { return nil }
        return Int64(header)
    }

    /// The bucket rows whose `xmin` is younger than the header's at `mark`: every engine
    /// writer after that state took the header row's lock after its writer committed, so
    /// got a younger transaction id. A row deleted, or written by an older transaction
    /// (one that began before and committed after), is not listed; the engine's sum over
    /// the digests catches that and reads every bucket (FORMAT.md section 13.1).
    package func manifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) -> [(bucket: Int64, digest: [UInt8])]? {
        guard transaction.inTransaction, let xid = UInt32(exactly: mark) else { return nil }
        let usable = manifestCacheUsable
        return try run { () throws in
            try connection.query(PostgresSQL.manifestDigestsChangedSince,
                                 [.text(vault), .text(String(xid)), bucket.map { .int64(Int64($0)) } ?? .nullInt64]) { rows in
                manifestRowsRead += rows.count
                let listed = (0..<rows.count).map { row in
                    let (bucket, digest) = (rows.int64(row, 0), rows.array(row, 1))
                    if usable { manifestCache.record(Int(bucket), digest) }
                    return (bucket, digest)
                }
                // Not listed: `bucket` has no row (what a write into it then reads).
                if usable, let bucket, !listed.contains(where: { $0.0 == Int64(bucket) }) { manifestCache.record(bucket, nil) }
                return listed
            }
        }
    }

    package func carryVerifiedBuckets(_ buckets: [Int]) -> [Int] {
        rowVersions.carry(buckets)
    }

    package func deleteAllManifestBuckets() throws(StorageError) {
        if manifestCacheUsable { manifestCache.removeAll() }
        try write(PostgresSQL.deleteAllManifestDigests, [.text(vault)])
    }
}
