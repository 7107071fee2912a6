/// An exclusive lock that every process and host opening the same vault can take by
/// name, for work that must run once across all of them (VaultAuth's token refresh: read
/// the vault, ask the token endpoint, write the vault).
///
/// Only a storage that other hosts reach has one (PostgreSQL: an advisory lock in the
/// database). A vault file lives on one host, where a lock file beside it does the job,
/// so ``VaultStorage/sharedLock(named:)`` answers `nil` there and the caller keeps its own.
package protocol SharedLock: Sendable {
    /// Waits until the lock is held. Blocking: call it off the cooperative pool.
    ///
    /// - Throws: ``VaultError/io(path:errno:)`` when the storage cannot be reached,
    ///   ``VaultError/busy(path:)`` when the storage gives up waiting.
    func acquire() throws(VaultError) -> any HeldSharedLock
}

/// A held ``SharedLock``. Released by ``release()`` (idempotent), when deallocated, and by
/// the storage when the holding process dies.
package protocol HeldSharedLock: Sendable {
    func release()
}

extension VaultStorage {
    /// No shared lock: the default for storage on one host (see ``SharedLock``).
    package func sharedLock(named name: String) -> (any SharedLock)? { nil }
}
