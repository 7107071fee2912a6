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
}
