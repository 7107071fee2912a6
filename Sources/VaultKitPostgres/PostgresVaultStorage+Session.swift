import VaultKit

/// Running statements on the session: libpq's failures leave as ``StorageError``s, writes
/// wait for the next round trip inside a transaction, and a session the server ended is
/// replaced between transactions.
extension PostgresVaultStorage {
    /// A write whose result is only checked: in a transaction it travels with the next
    /// statement (or the commit), and its failure is thrown there and rolls all back;
    /// outside one it is sent now.
    /// - Parameters:
    ///   - changingHeader: it writes the header row or the host wraps, so the row this
    ///     transaction kept is stale.
    ///   - hostWraps: it rewrites the host key wraps.
    func write(changingHeader: Bool = false, hostWraps: Bool = false, _ sql: String, _ parameters: [PostgresConnection.Parameter]) throws(StorageError) {
        if changingHeader { transaction.headerWritten(hostWraps: hostWraps) }
        try run { () throws in
            try connection.enqueue(sql, parameters)
            if !transaction.inTransaction { try connection.flush() }
        }
    }

    /// Runs libpq calls; their failures leave as ``StorageError``s.
    func run<Result>(_ body: () throws -> Result) throws(StorageError) -> Result {
        do {
            if !transaction.inTransaction { try reconnectIfEnded() }
            return try body()
        } catch {
            throw storageError(error)
        }
    }

    /// Runs libpq calls that also call the engine's closure: its error comes back unchanged.
    func passing<Result, BodyError: Error>(_: BodyError.Type, _ body: () throws -> Result) throws(StorageFailure<BodyError>) -> Result {
        try StorageFailure<BodyError>.catching({ () throws -> Result in
            if !transaction.inTransaction { try reconnectIfEnded() }
            return try body()
        }, translating: storageError)
    }

    /// Replaces a session the server ended (a restart, a failover, `pg_terminate_backend`)
    /// before the next transaction or lone statement. The call that met the ended session
    /// failed (`ECONNRESET`: whether a `COMMIT` in flight was applied is unknown, as with
    /// any database, and the engine's next read shows); none after it fails while the
    /// server can be reached. Never inside a transaction, whose work a new session would
    /// not have: the transaction fails and ends.
    private func reconnectIfEnded() throws {
        guard connection.isEnded else { return }
        connection = try PostgresConnection(conninfo: postgresLocation.conninfo, password: postgresLocation.password, lockTimeoutMilliseconds: lockTimeoutMilliseconds)
    }

    private func storageError(_ error: any Error) -> StorageError {
        switch error {
        case let error as StorageError: error
        case let error as PostgresFailure: error.storageError(location: location)
        default: .corrupted(reason: .unexpectedStorageError)
        }
    }
}
