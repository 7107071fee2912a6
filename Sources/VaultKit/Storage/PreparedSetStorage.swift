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
}

/// Every round-trip saving capability at once: what an engine whose every call crosses a
/// network (PostgreSQL) conforms to.
package typealias RoundTripSavingStorage = OpeningInsertStorage & PreparedSetStorage
