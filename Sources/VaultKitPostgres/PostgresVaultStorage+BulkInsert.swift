import VaultKit

/// A write transaction's gathered `set`s inserted in one statement
/// (``GatheringInsertStorage``), and the answer to the insert sent with the lock.
extension PostgresVaultStorage {
    /// Rows per statement: about 150 KiB of parameters for small items, and the round
    /// trip becomes a small part of each row's cost.
    package var insertGatherLimit: Int { 1_000 }

    /// All rows in one statement (arrays of each column, `unnest`ed), which returns the rows
    /// that did not go in, each with the row in its place (an import of new items returns
    /// nothing, and looks nothing up).
    package func insertAllIfAbsent(_ rows: [StoredRow]) throws(StorageError) -> [StoredRow?] {
        transaction.forgetFoundRow()
        if let early = transaction.takeOpeningResult() {
            // Only the row sent early is answered by that insert.
            guard rows.count == 1, Self.same(rows[0], early.row) else { throw .corrupted(reason: .unexpectedStorageError) }
            return [try rowInPlace(of: rows[0], inserted: early.inserted, found: early.found)]
        }
        if rows.count == 1 {
            let (inserted, found, xmin) = try insertOrFind(rows[0])
            if let found { confirmUnderLock(found, xmin: xmin) }
            return [try rowInPlace(of: rows[0], inserted: inserted, found: found)]
        }
        let results = try run { () throws in
            try connection.query(PostgresSQL.insertAllIfAbsent, [
                .text(vault), .byteaArray(rows.map(\.lookupID)), .byteaArray(rows.map(\.serviceTag)),
                .byteaArray(rows.map(\.nonce)), .byteaArray(rows.map(\.sealed)),
            ]) { result -> [(Bool, StoredRow?)] in
                var outcome = [(Bool, StoredRow?)](repeating: (true, nil), count: rows.count)
                for line in 0..<result.count {
                    let index = Int(result.int64(line, 0)) - 1
                    guard outcome.indices.contains(index), outcome[index].0 else {
                        // A position twice: its lookup id is stored twice.
                        throw StorageError.corrupted(reason: .rowStoredTwice)
                    }
                    guard !result.isNull(line, 1) else {
                        outcome[index] = (false, nil)
                        continue
                    }
                    let found = StoredRow(lookupID: rows[index].lookupID, serviceTag: result.array(line, 1), nonce: result.array(line, 2), sealed: result.array(line, 3))
                    confirmUnderLock(found, xmin: PostgresRowVersions.xid(result.text(line, 4)))
                    outcome[index] = (false, found)
                }
                return outcome
            }
        }
        var found: [StoredRow?] = []
        found.reserveCapacity(rows.count)
        for (row, (inserted, existing)) in zip(rows, results) {
            if inserted { rowVersions.wrote(lookupID: row.lookupID) }
            found.append(try rowInPlace(of: row, inserted: inserted, found: existing))
        }
        return found
    }

    private static func same(_ one: StoredRow, _ other: StoredRow) -> Bool {
        one.lookupID == other.lookupID && one.serviceTag == other.serviceTag && one.nonce == other.nonce && one.sealed == other.sealed
    }

    /// `nil` for a row inserted, else the row in its place: as the inserting statement
    /// found it, or read afresh when that statement's snapshot did not show it (committed
    /// by another session after the snapshot, before the insert).
    private func rowInPlace(of row: StoredRow, inserted: Bool, found: StoredRow?) throws(StorageError) -> StoredRow? {
        if inserted { return nil }
        if let found { return found }
        let lookupID = row.lookupID
        return try run { () throws in
            try connection.query(PostgresSQL.itemRow, [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count < 2 else { throw StorageError.corrupted(reason: .rowStoredTwice) }
                // Deleted again meanwhile: only another session, not a writer of this vault, could.
                guard rows.count == 1 else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                let found = StoredRow(lookupID: lookupID, serviceTag: rows.array(0, 0), nonce: rows.array(0, 1), sealed: rows.array(0, 2))
                confirmUnderLock(found, xmin: PostgresRowVersions.xid(rows.text(0, 3)))
                return found
            }
        }
    }
}
