/// The sealed item rows, keyed by lookup id: opaque bytes to this type.
extension VaultDatabase {
    /// Calls `body` with the service tag, nonce and sealed record of one item, without
    /// copying them, or returns `nil` when there is no such row.
    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        try query("SELECT service_tag, nonce, sealed FROM vault_items WHERE lookup_id = ?", passing: BodyError.self) { statement in
            try statement.bind(1, blob: lookupID)
            guard try statement.step() else { return nil }
            return try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
        }
    }

    /// Calls `body` for every row, or every row with this service tag.
    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let sql = serviceTag == nil
            ? "SELECT lookup_id, service_tag, nonce, sealed FROM vault_items"
            : "SELECT lookup_id, service_tag, nonce, sealed FROM vault_items WHERE service_tag = ?"
        try query(sql, passing: BodyError.self) { statement in
            if let serviceTag { try statement.bind(1, blob: serviceTag) }
            while try statement.step() {
                let row = StoredRow(
                    lookupID: Array(statement.blob(0)), serviceTag: Array(statement.blob(1)),
                    nonce: Array(statement.blob(2)), sealed: Array(statement.blob(3))
                )
                try StorageFailure.passing { () throws(BodyError) in try body(row) }
            }
        }
    }

    /// Calls `body` with the identifying columns (not the sealed record) of every row,
    /// or of the rows whose lookup id is in `range.lower ..< range.upper` (`upper` is
    /// `nil` for no upper bound), in lookup id order, without copying them: what the
    /// manifest is computed from.
    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let columns = "SELECT lookup_id, service_tag, nonce FROM vault_items"
        let sql = switch range {
        case nil: "\(columns) ORDER BY lookup_id"
        case (_, nil)?: "\(columns) WHERE lookup_id >= ?1 ORDER BY lookup_id"
        case _?: "\(columns) WHERE lookup_id >= ?1 AND lookup_id < ?2 ORDER BY lookup_id"
        }
        try query(sql, passing: BodyError.self) { statement in
            if let range {
                try statement.bind(1, blob: range.lower)
                if let upper = range.upper { try statement.bind(2, blob: upper) }
            }
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
            }
        }
    }

    /// Inserts the row, or replaces the one with the same lookup id.
    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        _ = try writeRow("INSERT OR REPLACE INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES (?, ?, ?, ?)",
                         lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    /// Inserts the row unless one with its lookup id exists; returns whether it inserted.
    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        try writeRow("INSERT INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES (?, ?, ?, ?) ON CONFLICT (lookup_id) DO NOTHING",
                     lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed) > 0
    }

    /// Runs an insert of one item row; returns how many rows it changed.
    private func writeRow(_ sql: String, lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Int {
        try query(sql) { statement in
            try statement.bind(1, blob: lookupID)
            try statement.bind(2, blob: serviceTag)
            try statement.bind(3, blob: nonce)
            try statement.bind(4, blob: sealed)
            _ = try statement.step()
            return connection.changes
        }
    }

    /// Deletes one row; returns its service tag and nonce if it existed.
    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        try query("DELETE FROM vault_items WHERE lookup_id = ? RETURNING service_tag, nonce") { statement in
            try statement.bind(1, blob: lookupID)
            guard try statement.step() else { return nil }
            let deleted = (Array(statement.blob(0)), Array(statement.blob(1)))
            while try statement.step() {}
            return deleted
        }
    }

    /// Deletes every row with this service tag, or every row, calling `body` with the
    /// identifying columns of each deleted row; returns how many.
    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        let sql = serviceTag == nil
            ? "DELETE FROM vault_items RETURNING lookup_id, service_tag, nonce"
            : "DELETE FROM vault_items WHERE service_tag = ? RETURNING lookup_id, service_tag, nonce"
        return try query(sql, passing: BodyError.self) { statement in
            if let serviceTag { try statement.bind(1, blob: serviceTag) }
            var count = 0
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
                count += 1
            }
            return count
        }
    }
}
