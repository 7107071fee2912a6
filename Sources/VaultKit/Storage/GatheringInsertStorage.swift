/// A storage that takes many new rows in one call: a batch of `set`s is then one round
/// trip, not one per item (a database server).
///
/// What it switches on: the engine gathers up to ``insertGatherLimit`` `set`s of new items
/// and inserts them together. A file engine gains nothing from that, and a gathered insert
/// reports its failure from a later call, so only an engine that asks for it gets it.
package protocol GatheringInsertStorage: VaultStorage {
    /// How many `set`s the engine gathers before inserting them in one call (above 1).
    var insertGatherLimit: Int { get }

    /// Inserts each row unless one with its lookup id exists (the lookup ids are distinct),
    /// in order; returns, per row, `nil` when it was inserted, else the row in its place.
    func insertAllIfAbsent(_ rows: [StoredRow]) throws(StorageError) -> [StoredRow?]
}
