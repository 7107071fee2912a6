/// Transactions and the snapshot they read: the seam's guarantees of isolation and
/// durability, as SQLite's locks and write-ahead log give them.
extension VaultDatabase {
    /// Runs `body` holding the database's write lock (`BEGIN IMMEDIATE`), so a
    /// read-then-write inside it cannot race another process; commits durably, or
    /// rolls back if `body` throws.
    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if let readOnlyReason { throw .storage(readOnlyReason) }
        try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("BEGIN IMMEDIATE") }
        do {
            let result = try StorageFailure<BodyError>.passing(body)
            try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("COMMIT") }
            return result
        } catch {
            try? run("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one read snapshot, so a multi-row read sees one consistent state;
    /// inside a transaction already, in that one's.
    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if connection.isInTransaction { return try StorageFailure<BodyError>.passing(body) }
        try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("BEGIN DEFERRED") }
        defer { try? run("COMMIT") }
        return try StorageFailure<BodyError>.passing(body)
    }

    /// The version of the snapshot the last statement read (see
    /// ``SQLiteConnection/dataVersion``): what a process verified of the file holds
    /// while it stays the same, and this connection's own commits move it on.
    var snapshotVersion: Int64 { Int64(connection.dataVersion) }

    /// Starts the read snapshot of an open `BEGIN DEFERRED` transaction with the
    /// cheapest read there is, so ``snapshotVersion`` names it.
    func pinSnapshot() throws(StorageError) {
        try query("SELECT 1 FROM vault_header WHERE singleton = 1") { statement in _ = try statement.step() }
    }
}
