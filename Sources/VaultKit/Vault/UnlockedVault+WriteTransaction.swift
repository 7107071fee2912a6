/// The write transaction every change runs in: rows, manifest and generation commit together.
extension UnlockedVault {
    /// Runs `body` in a write transaction that first follows a re-key by another
    /// process and last applies the manifest changes `body`'s writes recorded, so rows
    /// and manifest always commit together.
    ///
    /// - Parameter opening: the insert `body` opens with, prepared before the lock, which a
    ///   storage may send with it (``UnlockedVault/set(_:service:account:label:generic:keepHistory:)``).
    mutating func writeTransaction<Result>(
        opening: OpeningInsert? = nil, _ body: (UnlockedVault) throws(VaultError) -> Result
    ) throws(VaultError) -> Result {
        try rollbackGuard?.ensureRecordable()
        // Changes of a transaction that rolls back must not outlive it.
        manifestChanges.removeAll()
        pendingInserts.reset()
        manifestCheck.verified.discardTransaction()
        manifestCheck.discardProvenChanges()
        defer {
            manifestChanges.removeAll()
            pendingInserts.reset()
            manifestCheck.holdsWriteLock = false
            manifestCheck.verified.discardTransaction()
            manifestCheck.discardProvenChanges()
        }
        var versionBefore: Int64 = -1
        manifestCheck.committing = nil
        let result = try store.writeTransaction(opening: opening) { () throws(VaultError) in
            try refreshKeysIfRekeyed()
            // What other connections committed before this lock was taken, checked once:
            // refreshKeysIfRekeyed's read started this transaction's snapshot.
            versionBefore = store.snapshotVersion
            if versionBefore != manifestCheck.dataVersion { manifestCheck.reset(dataVersion: versionBefore) }
            manifestCheck.holdsWriteLock = true
            // A `set` that keeps a version is prepared from the retention (PreparedArchive):
            // read once, by a handle's first write, so its later `set`s need no read.
            if store.commitsPreparedSets, manifestCheck.verified.retention == nil { _ = try historyRetentionInTransaction() }
            let result = try body(self)
            try flushPendingInserts()
            // A gathered insert failed (and the caller went on): rows may be stored whose
            // manifest terms are not recorded.
            if let failure = pendingInserts.failure { throw failure }
            try applyManifestChanges()
            return result
        }
        let carried = manifestCheck.dataVersion == versionBefore
        manifestCheck.ownCommit(from: versionBefore, to: store.snapshotVersion)
        // The rows and root kept for prepared sets move on with this commit's changes.
        if carried { manifestCheck.verified.applyTransaction() }
        manifestCheck.applyProvenChanges(mark: store.manifestMarkOfLastCommit)
        recordCommit()
        return result
    }
}
