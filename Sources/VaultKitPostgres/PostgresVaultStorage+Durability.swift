import VaultKit

/// Early lock release: a write transaction commits without waiting for its WAL flush, so
/// the header row lock is free for the next writer at once, and the durability barrier
/// behind its commit waits for the flush before the call returns (docs/POSTGRES.md,
/// "Early lock release"). Another session can read the commit before it is durable; what
/// the rollback guard records of what this session read waits for the barrier here.
extension PostgresVaultStorage: DurabilityBarrierStorage {
    /// Runs the durability barrier on this session: every commit it read (or made) before
    /// is durable when it returns.
    package func awaitDurability() throws(StorageError) {
        guard !transaction.inTransaction else { throw .corrupted(reason: .unexpectedStorageError) }
        try run { () throws in try connection.awaitDurability() }
    }
}
