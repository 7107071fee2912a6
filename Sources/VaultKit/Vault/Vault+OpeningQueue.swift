extension Vault {
    /// Runs a blocking create or open (Argon2id, disk, network) on a queue of its own,
    /// never on the cooperative pool: what the async twins of this module's entry points
    /// do, offered to the other storage engines' modules for theirs.
    package static func offPoolOpening<Result: Sendable>(_ work: @escaping @Sendable () throws(VaultError) -> Result) async throws(VaultError) -> Result {
        try await VaultQueues.run(on: VaultQueues.opening(), unlessCancelledThrowing: .cancelled, work)
    }
}
