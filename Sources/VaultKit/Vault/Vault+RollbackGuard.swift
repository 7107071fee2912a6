#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Checking a vault against the newest state of it this user has seen (``RollbackGuard``).
extension Vault {
    /// Checks this vault against the newest state of it this user has seen, recorded in
    /// `rollbackGuard`'s directory, and from now on records each commit there.
    ///
    /// Call it right after opening. It is O(1): it reads the vault's authenticated
    /// generation and manifest root, and one record of at most 2161 bytes; each later commit adds one
    /// small write to the record (see ``RollbackGuard``).
    ///
    /// - Parameters:
    ///   - rollbackGuard: where this user's records of the vaults they have seen live.
    ///   - acceptingCurrentState: take the vault as it is as the newest state, even if it
    ///     is older than the record: for a backup restored on purpose.
    /// - Throws: ``VaultError/rolledBack(path:seenGeneration:fileGeneration:)`` when the
    ///   file is older than the record (replaced with an older copy, or commits lost
    ///   from its `-wal`), holds a different state at the recorded generation, or is under
    ///   a master key the vault has retired (a removed host's pre-removal state written
    ///   back at a higher generation);
    ///   ``VaultError/tampered(reason:)`` if the header does not authenticate;
    ///   ``VaultError/io(path:errno:)`` and the permission errors for the record's directory.
    public func useRollbackGuard(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool = false) throws(VaultError) {
        _ = try useRollbackGuard(rollbackGuard, acceptingCurrentState: acceptingCurrentState, readOnlyFallback: false)
    }

    /// ``useRollbackGuard(_:acceptingCurrentState:)-5nooc`` for a tool whose reads must not
    /// depend on the guard's own state being writable (a read-only or full state
    /// directory, an immutable record, a home directory that is missing or not this
    /// user's).
    ///
    /// It compares with the record whenever one can be read, exactly as the strict form
    /// does, and records when it can. When the state could not be recorded, it returns
    /// why instead of throwing, and from then on every write of this handle throws that
    /// error before it starts: a commit the record could not follow would leave the
    /// record behind the file for good.
    ///
    /// - Returns: why this state could not be recorded (its path is in the guard's
    ///   directory), or `nil` when it was recorded or already was.
    /// - Throws: what ``useRollbackGuard(_:acceptingCurrentState:)-5nooc`` throws, except
    ///   the errors of creating or writing the guard's directory, key and record.
    @discardableResult
    public func useRollbackGuardReadingWhereUnwritable(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool = false) throws(VaultError) -> VaultError? {
        try useRollbackGuard(rollbackGuard, acceptingCurrentState: acceptingCurrentState, readOnlyFallback: true)
    }

    private func useRollbackGuard(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool, readOnlyFallback: Bool) throws(VaultError) -> VaultError? {
        try withUnlocked { (vault) throws(VaultError) -> VaultError? in
            let vaultID = try vault.verifiedStateFollowingRekey().vaultID
            let file = try RollbackGuardFile(rollbackGuard, vaultID: vaultID, vaultPath: location.description, readOnlyFallback: readOnlyFallback)
            let unrecorded = try file.check(keys: vault.keys, accepting: acceptingCurrentState) { () throws(VaultError) in
                // Read under the record's lock, following a re-key made since this
                // handle unlocked the vault: its old keys do not verify the new header.
                let state = try vault.verifiedStateFollowingRekey()
                guard state.vaultID == vaultID else { throw .tampered(reason: .vaultIDChanged) }
                return (state.generation, state.root, vault.keys.keyCheck)
            } makingDurable: { () throws(VaultError) in
                // Another process's commit may be readable before it is durable.
                try vault.store.awaitDurability()
            }
            vault.rollbackGuard = file
            return unrecorded
        }
    }
}
