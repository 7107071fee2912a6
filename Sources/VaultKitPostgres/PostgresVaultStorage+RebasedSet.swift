import VaultKit

/// A prepared `set` the header refused (another writer committed since it was prepared),
/// rebuilt by the engine on the state it finds under the lock and committed in the
/// lock's transaction: two round trips under the lock (docs/POSTGRES.md, "Writes from
/// many processes").
extension PostgresVaultStorage {
    /// Round trip one: `BEGIN`, the lock, the header row and the buckets changed since
    /// `mark`, in the lock's snapshot. Round trip two, if `rebase` returns a set: its
    /// statements (``enqueuePrepared(_:onCheck:)``, the same checks, now under a lock
    /// this session holds) and `COMMIT`, with the durability barrier behind it.
    package func commitRebased<BodyError: Error>(
        changedSince mark: Int64, _ rebase: () throws(BodyError) -> PreparedSet?
    ) throws(StorageFailure<BodyError>) -> PreparedSet.Outcome? {
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in
                transaction = .locking
                manifestMarkOfLastCommit = nil
                do {
                    try lockListingChanges(since: mark)
                } catch {
                    endTransaction(committing: false)
                    throw error
                }
            }
        }
        let set: PreparedSet?
        do {
            set = try StorageFailure<BodyError>.passing(rebase)
        } catch {
            endTransaction(committing: false)
            throw error
        }
        guard let set else {
            endTransaction(committing: false)
            return nil
        }
        return try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in try commitLocked(set) }
        }
    }

    /// Takes the lock and reads the header row (kept for the transaction) and the listing.
    private func lockListingChanges(since mark: Int64) throws {
        try connection.enqueue(PostgresSQL.beginWrite)
        try connection.enqueue(PostgresSQL.lockHeader, [.text(vault)])
        var read: PostgresHeaderRow?
        try connection.enqueue(PostgresSQL.headerRow, [.text(vault)]) { read = PostgresHeaderRow($0) }
        var listed: [(bucket: Int64, digest: [UInt8]?)]?
        if let (sql, parameters) = changedBucketsQuery(since: mark, including: nil) {
            try connection.enqueue(sql, parameters) { listed = Self.changedBuckets($0) }
        }
        try connection.flush()
        guard let read else { throw StorageError.notFound(location: location) }
        useLock(read)
        if let listed {
            manifestRowsRead += listed.count
            transaction.updateWrite { $0.listed = (mark, listed) }
        }
    }

    /// Sends `set` with `COMMIT`; `.stale`, rolled back, when a check under the lock failed.
    private func commitLocked(_ set: PreparedSet) throws -> PreparedSet.Outcome {
        guard case .writing(let write) = transaction else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
        let before = snapshotVersion
        var checked = false
        let barrier: UInt64?
        do {
            try enqueuePrepared(set) { _ in checked = true }
            try connection.enqueueAsynchronousCommit()
            try connection.enqueue(PostgresSQL.commit)
            barrier = try connection.flushCommitting()
        } catch let failure as PostgresFailure where failure.sqlState == PostgresSQL.preparedStateDiffers {
            endTransaction(committing: false)
            return .stale
        } catch {
            endTransaction(committing: false)
            throw error
        }
        guard checked else {
            // Committed, but the check's row is missing: what was verified is not carried.
            endTransaction(committing: true)
            throw StorageError.corrupted(reason: .unexpectedStorageError)
        }
        recordWrites(of: set)
        manifestCache.carry(to: versionAfterOwnCommit(lockSnapshot: write.lockSnapshot, ownTransaction: write.ownTransaction, barrier: barrier))
        manifestMarkOfLastCommit = markOfOwnCommit(generation: set.generation, ownXmin: write.ownXmin)
        snapshotVersion = rowVersions.committed(own: write.ownXmin, wroteHeader: true, derivable: true)
        endTransaction(committing: true)
        return .committed(versionBefore: before)
    }
}
