/// A storage that can send a lone `set`'s insert together with the write lock, in one round
/// trip, instead of after it (``OpeningInsert``).
///
/// What it switches on: a lone `set` of a new item in a bucket the engine verified is
/// sealed before the transaction and handed to ``writeTransaction(opening:_:)``.
package protocol OpeningInsertStorage: GatheringInsertStorage {
    /// Runs a write transaction whose body opens by inserting `opening.row` (through
    /// ``GatheringInsertStorage/insertAllIfAbsent(_:)``), so the storage may send that
    /// insert with the lock.
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
}
