/// Running one statement: where every SQLite failure becomes a `StorageError`, and where
/// the debug build's `BlockingWorkProbe` counts the work by thread.
extension VaultDatabase {
    func run(_ sql: String) throws(StorageError) {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        do { try connection.execute(sql) } catch { throw error.translated(path: path) }
    }

    func integerPragma(_ pragma: String) throws(StorageError) -> Int64 {
        try query("PRAGMA \(pragma)") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .emptyPragmaResult) }
            return statement.int64(0)
        }
    }

    func textPragma(_ pragma: String) throws(StorageError) -> String? {
        try query("PRAGMA \(pragma)") { statement in
            guard try statement.step() else { return nil }
            return statement.text(0)
        }
    }

    /// Runs one statement; `body` may throw ``SQLiteError`` and ``StorageError`` only.
    func query<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws(StorageError) -> Result {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        do {
            return try connection.withStatement(sql, body)
        } catch {
            throw storageError(error)
        }
    }

    /// Runs one statement whose `body` also calls the engine's closure, through
    /// ``StorageFailure/passing(_:)``: that closure's error comes back unchanged.
    func query<Result, BodyError: Error>(
        _ sql: String, passing: BodyError.Type, _ body: (SQLiteStatement) throws -> Result
    ) throws(StorageFailure<BodyError>) -> Result {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        return try StorageFailure<BodyError>.catching({ try connection.withStatement(sql, body) }, translating: storageError)
    }

    private func storageError(_ error: any Error) -> StorageError {
        switch error {
        case let error as StorageError: error
        case let error as SQLiteError: error.translated(path: path)
        default: .corrupted(reason: .unexpectedStorageError)
        }
    }
}
