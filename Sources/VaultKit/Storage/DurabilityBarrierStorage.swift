/// A storage whose commits may be seen by other connections before they are durable, and
/// that can wait until they are.
///
/// Why: a database server may release a writer's locks as it commits and flush the
/// commit's log a moment later (PostgreSQL's early lock release, docs/POSTGRES.md), so
/// writers do not queue behind each other's flushes. The writer itself returns only once
/// its commit is durable, but another connection can read that state in between, and a
/// server crash in that window takes it back. The rollback guard must never record such
/// a state: the crash would then look like a rollback.
///
/// What it switches on: the engine calls ``awaitDurability()`` before the rollback guard
/// records a state it read (not one it committed: a storage's commit returns durable).
package protocol DurabilityBarrierStorage: VaultStorage {
    /// Returns once every state this storage has read or committed so far is durable.
    /// Outside any transaction.
    func awaitDurability() throws(StorageError)
}
