/// The first insert of a write transaction, prepared before its lock (a lone `set`, sealed
/// as a new item): valid while the storage is as the engine last verified it.
package struct OpeningInsert {
    package var row: StoredRow
    /// The snapshot version the engine verified the row's manifest bucket at.
    package var snapshotVersion: Int64
    /// The key check value of the keys that sealed the row.
    package var keyCheck: [UInt8]

    package init(row: StoredRow, snapshotVersion: Int64, keyCheck: [UInt8]) {
        self.row = row
        self.snapshotVersion = snapshotVersion
        self.keyCheck = keyCheck
    }
}
