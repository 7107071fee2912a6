import VaultKit

/// A lone `set` the engine prepared whole (``PreparedSet``), committed in one round trip
/// without `BEGIN`, `COMMIT` or a separate lock (docs/POSTGRES.md).
extension PostgresVaultStorage {
    /// One round trip: the header (whose `UPDATE` takes the lock), the check, the item and
    /// the bucket digest, pipelined up to one sync point and so run as one implicit
    /// transaction (READ COMMITTED, set per session), committed at the sync point, or
    /// rolled back there if any statement failed: when the check fails, the server skips
    /// the item and digest writes and undoes the header's. No `BEGIN`, no `COMMIT` and no
    /// separate lock: three statements fewer than a transaction of its own. The commit
    /// does not wait for its flush; the durability barrier after the sync point does.
    package func commit(_ set: PreparedSet) throws(StorageError) -> PreparedSet.Outcome {
        try run { () throws in
            // Without a known vault state nothing is required of the header, and the engine
            // is told of a version it has not verified.
            if rowVersions.headerXmin == nil { _ = rowVersions.forgetState() }
            transaction = .committingPreparedSet
            manifestMarkOfLastCommit = nil
            var checked: (snapshot: String, ownTransaction: UInt64?)?
            var barrier: UInt64?
            do {
                // Committed at the sync point without waiting for the flush, which the
                // barrier behind it waits for, outside the lock, in the same round trip.
                try connection.enqueueAsynchronousCommit()
                try enqueuePrepared(set) { rows in
                    checked = (rows.text(0, 0), rows.isNull(0, 1) ? nil : UInt64(rows.text(0, 1)))
                }
                barrier = try connection.flushCommitting()
            } catch let failure as PostgresFailure where failure.sqlState == PostgresSQL.preparedStateDiffers {
                endTransaction(committing: false, rollingBack: false)
                return .stale
            } catch {
                endTransaction(committing: false, rollingBack: false)
                throw error
            }
            guard let checked else {
                // Committed, but the check's row is missing: what was verified is not carried.
                endTransaction(committing: true)
                throw StorageError.corrupted(reason: .unexpectedStorageError)
            }
            manifestCache.use(version(ofSnapshot: checked.snapshot, ownTransaction: checked.ownTransaction))
            // The header's UPDATE required the vault state this version names (when known):
            // nothing else changed the header or the wraps before this commit.
            let before = rowVersions.version
            rowVersions.readsBelong(to: before)
            recordWrites(of: set)
            manifestCache.carry(to: versionAfterOwnCommit(lockSnapshot: PostgresSnapshot(checked.snapshot), ownTransaction: checked.ownTransaction, barrier: barrier))
            let ownXmin = checked.ownTransaction.map { UInt32(truncatingIfNeeded: $0) }
            manifestMarkOfLastCommit = markOfOwnCommit(generation: set.generation, ownXmin: ownXmin)
            snapshotVersion = rowVersions.committed(own: ownXmin, wroteHeader: true, derivable: true)
            endTransaction(committing: true)
            return .committed(versionBefore: before)
        }
    }

    /// The rows and digests `set` writes, as this transaction's (kept once it commits).
    func recordWrites(of set: PreparedSet) {
        rowVersions.wrote(lookupID: set.row.lookupID)
        if let version = set.version { rowVersions.wrote(lookupID: version.lookupID) }
        if let trimmed = set.trimmed { rowVersions.wrote(lookupID: trimmed.lookupID, deleted: true) }
        manifestCache.record(set.bucket, set.digestAfter)
        for other in set.otherBuckets { manifestCache.record(other.bucket, other.after) }
    }

    /// Queues `set`'s statements: the header's `UPDATE`, the checks (`onCheck` is given
    /// the first one's row) and the writes, with the change markers.
    func enqueuePrepared(_ set: PreparedSet, onCheck: @escaping (PostgresRows) -> Void) throws {
        let row = set.row
        let bucket = Int64(set.bucket)
        // The header first: its row lock is the write lock, and in READ COMMITTED an
        // `UPDATE` that waited for it re-reads the row, so it applies only if no other
        // writer committed in between, and only to the row version (`xmin`, `$7`) the
        // vault state names, so nobody changed it since either.
        let headerXmin: PostgresConnection.Parameter = rowVersions.headerXmin.map { .text(String($0)) } ?? .nullText
        try connection.enqueue(PostgresSQL.preparedHeaderUpdate, [
            .text(vault), .bytes(set.root), .bytes(set.tag), .int64(Int64(bitPattern: set.generation)),
            .int64(Int64(bitPattern: set.generationBefore)), .bytes(set.tagBefore), headerXmin,
        ])
        let hostWraps: PostgresConnection.Parameter = rowVersions.headerXmin == nil ? .nullText : .text(rowVersions.hostWraps ?? "")
        try connection.enqueue(PostgresSQL.preparedSetCheck, [
            .text(vault), .int64(Int64(bitPattern: set.generation)), .bytes(set.tag),
            .bytes(row.lookupID), set.replacedNonce.map { .bytes($0) } ?? .nullBytes,
            .int64(bucket), set.digestBefore.map { .bytes($0) } ?? .nullBytes, hostWraps,
        ], onRows: onCheck)
        if let settings = set.settings {
            // What keeping a version builds on, checked before anything is written.
            let others = set.otherBuckets
            guard others.count <= 2 else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
            func other(_ index: Int) -> [PostgresConnection.Parameter] {
                guard others.indices.contains(index) else { return [.nullInt64, .nullBytes] }
                return [.int64(Int64(others[index].bucket)), others[index].before.map { .bytes($0) } ?? .nullBytes]
            }
            try connection.enqueue(PostgresSQL.preparedHistoryCheck, [
                .text(vault), set.version.map { .bytes($0.lookupID) } ?? .nullBytes,
                set.trimmed.map { .bytes($0.lookupID) } ?? .nullBytes, set.trimmed.map { .bytes($0.nonce) } ?? .nullBytes,
                set.noRowsOfServiceTag.map { .bytes($0) } ?? .nullBytes,
                .bytes(settings.lookupID), settings.nonce.map { .bytes($0) } ?? .nullBytes,
            ] + other(0) + other(1))
        }
        let rowParameters: [PostgresConnection.Parameter] = [.text(vault), .bytes(row.lookupID), .bytes(row.serviceTag), .bytes(row.nonce), .bytes(row.sealed)]
        try connection.enqueue(set.replacedNonce != nil ? PostgresSQL.updateItem : PostgresSQL.insertItem, rowParameters)
        try enqueueDigest(bucket: set.bucket, before: set.digestBefore, after: set.digestAfter)
        if let version = set.version {
            try connection.enqueue(PostgresSQL.insertItem, [
                .text(vault), .bytes(version.lookupID), .bytes(version.serviceTag), .bytes(version.nonce), .bytes(version.sealed),
            ])
        }
        if let trimmed = set.trimmed {
            try connection.enqueue(PostgresSQL.deleteVersion, [.text(vault), .bytes(trimmed.lookupID)])
        }
        for other in set.otherBuckets {
            try enqueueDigest(bucket: other.bucket, before: other.before, after: other.after)
        }
        try enqueueChangeMarkers(Set([set.bucket] + set.otherBuckets.map(\.bucket)), generation: set.generation)
    }

    /// The write of a bucket's digest row from `before` to `after` (`nil`: no row).
    private func enqueueDigest(bucket: Int, before: [UInt8]?, after: [UInt8]?) throws {
        let bucket = Int64(bucket)
        switch (before, after) {
        case (nil, nil):
            return
        case (_, nil):
            try connection.enqueue(PostgresSQL.deleteManifestDigest, [.text(vault), .int64(bucket)])
        case (nil, let after?):
            try connection.enqueue(PostgresSQL.insertManifestDigest, [.text(vault), .int64(bucket), .bytes(after)])
        case (_?, let after?):
            try connection.enqueue(PostgresSQL.updateManifestDigest, [.text(vault), .int64(bucket), .bytes(after)])
        }
    }
}
