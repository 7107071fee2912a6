/// Waiting until what the engine read is durable (``DurabilityBarrierStorage``), before
/// the rollback guard records it.
extension VaultStore {
    /// Returns once every state the storage read is durable; at once on a storage whose
    /// states are durable before any connection sees them (SQLite, the in-memory one).
    func awaitDurability() throws(VaultError) {
        guard let barrier = storage as? any DurabilityBarrierStorage else { return }
        try Self.converting { () throws(StorageError) in try barrier.awaitDurability() }
    }
}
