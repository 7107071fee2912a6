/// A ``VaultStorage`` whose every call is a network round trip (a database server): it
/// takes many new rows in one call, so a batch of `set`s is not one round trip per item.
///
/// Why a protocol of its own: a file engine gains nothing from gathering inserts, and an
/// insert gathered for later reports its failure from a later call; so only the engines
/// that ask for it get it, and the others' behaviour stays exactly as it was.
package protocol BulkInsertingStorage: VaultStorage {
    /// How many `set`s the engine gathers before inserting them in one call.
    var bulkInsertLimit: Int { get }

    /// Inserts each row unless one with its lookup id exists (the lookup ids are distinct),
    /// in order; returns, per row, `nil` when it was inserted, else the row in its place.
    func insertAllIfAbsent(_ rows: [StoredRow]) throws(StorageError) -> [StoredRow?]

    /// Runs a write transaction whose body opens by inserting `opening.row` (through
    /// ``insertAllIfAbsent(_:)``), so a storage may send that insert with the lock, in one
    /// round trip, instead of after it.
    ///
    /// The insert was prepared before the lock, so it is only valid if nothing committed
    /// meanwhile: an implementation that sends it early keeps its effect only when the
    /// lock's snapshot has version `opening.snapshotVersion` and the header's key check is
    /// `opening.keyCheck`, and otherwise undoes it before anything `body` reads. Either way `body`
    /// runs as under ``VaultStorage/writeTransaction(_:)``, and must ask for exactly that
    /// insert before any other item read or write.
    func writeTransaction<Result, BodyError: Error>(
        opening: OpeningInsert, _ body: () throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result

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
