/// A storage that commits a lone `set` prepared entirely before its transaction, in one
/// call that checks the stored state is still the one it was prepared from (``PreparedSet``).
///
/// What it switches on: the engine keeps the rows of the buckets it verified
/// (``VerifiedBuckets``), read whole through ``forEachRow(in:_:)``, and prepares later
/// `set`s in them without a read.
package protocol PreparedSetStorage: VaultStorage {
    /// Calls `body` with every row whose lookup id is in `range` (lower bound included,
    /// upper excluded, `nil`: no upper bound), in lookup id order, whole: what the engine
    /// keeps of a bucket it verified, to prepare later `set`s in it without a read.
    func forEachRow<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?), _ body: (StoredRow) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>)

    /// Commits `set` in a write transaction of its own, if the stored state is the one it
    /// was prepared from (``PreparedSet``); otherwise writes nothing.
    func commit(_ set: PreparedSet) throws(StorageError) -> PreparedSet.Outcome

    /// After ``commit(_:)`` found the vault changed: takes the write lock and, in the same
    /// call, reads the header row and lists the manifest buckets changed since `mark`
    /// (what ``readHeader()``, ``readManifestRoot()``, ``readGeneration()`` and
    /// ``manifestBuckets(changedSince:including:)`` for `mark` then answer without a
    /// call of their own). `rebase` decides from them, holding the lock: the set rebuilt on
    /// the locked state, committed as ``commit(_:)`` commits one (so `.stale` when the
    /// stored state is not the one it names), or `nil`: nothing is written and the lock is
    /// released. Why: with several writers nearly every prepared set meets another's
    /// commit, and this keeps its write at two calls under the lock instead of a write
    /// transaction's reads one by one.
    func commitRebased<BodyError: Error>(
        changedSince mark: Int64, _ rebase: () throws(BodyError) -> PreparedSet?
    ) throws(StorageFailure<BodyError>) -> PreparedSet.Outcome?
}

/// Every round-trip saving capability at once: what an engine whose every call crosses a
/// network (PostgreSQL) conforms to.
package typealias RoundTripSavingStorage = OpeningInsertStorage & PreparedSetStorage
