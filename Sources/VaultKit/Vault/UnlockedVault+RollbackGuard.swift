/// The rollback guard of a vault held open: every state another process committed is
/// compared with the record when this handle first verifies it, so a long-lived handle
/// (the `vault` agent above all) answers as a fresh open would.
///
/// Why: a guard checked only at opening let a held PostgreSQL vault whose rows were put
/// back serve the old secrets, verify them, and fork the history with its next write.
extension UnlockedVault {
    /// Notes a header state just verified from a snapshot this handle had not verified.
    ///
    /// Inside a write transaction it is compared at once: nothing can commit past the
    /// write lock's snapshot, so a record ahead of it is a rollback. It is not recorded
    /// there: the last writer may have released the lock before its commit was durable,
    /// and this transaction's own commit records a later state once it is. Elsewhere the
    /// snapshot may be older than a commit recorded since, which only a fresh read (after
    /// this call's transactions) can tell: it is compared by ``checkPendingRollbackGuard()``.
    func noteVerifiedState(_ verified: (generation: UInt64, root: ManifestDigest)) throws(VaultError) {
        guard let rollbackGuard else { return }
        // With the master key it verified under: the record may have retired that key.
        let state = (verified.generation, verified.root, keys.keyCheck)
        guard manifestCheck.holdsWriteLock else {
            manifestCheck.guardPending = state
            return
        }
        do {
            _ = try rollbackGuard.compare(state, keys: keys, inWriteTransaction: true) { () throws(VaultError) in state }
        } catch where error.code == .rolledBack {
            manifestCheck.resetAll()
            throw error
        }
    }

    /// Compares the state noted by ``noteVerifiedState(_:)`` with the record; called by
    /// ``Vault`` once a call's transactions have ended. Rolled back, nothing verified is
    /// kept, so every later call checks again and says the same. A newer state is
    /// recorded only once the storage says it is durable (``VaultStore/awaitDurability()``):
    /// another process's commit can be read before it is, and a server crash would then
    /// take back a state the record holds, which the next check would call a rollback.
    mutating func checkPendingRollbackGuard() throws(VaultError) {
        guard let pending = manifestCheck.guardPending, let rollbackGuard else { return }
        manifestCheck.guardPending = nil
        do {
            let newer = try rollbackGuard.compare(pending, keys: keys, inWriteTransaction: false) { () throws(VaultError) in
                let state = try verifiedStateFollowingRekey()
                return (state.generation, state.root, keys.keyCheck)
            }
            // Best effort, as after a commit: a record that lags only weakens the next check.
            if newer, (try? store.awaitDurability()) != nil { rollbackGuard.record(pending, keys: keys) }
        } catch where error.code == .rolledBack {
            manifestCheck.resetAll()
            throw error
        } catch {
            // A passphrase change by another process since this call read the keys: the
            // caller follows it and compares again (``Vault``'s `withUnlocked`).
            if case .keyChanged = error { manifestCheck.guardPending = pending }
            throw error
        }
    }

    /// ``verifiedState()``, following once a re-key made by another process since this
    /// handle last read the keys: the header it made does not verify under the old ones.
    mutating func verifiedStateFollowingRekey() throws(VaultError) -> (vaultID: [UInt8], generation: UInt64, root: ManifestDigest) {
        do {
            return try verifiedState()
        } catch where error.code == .tampered {
            guard try refreshKeysIfRekeyed() else { throw error }
            return try verifiedState()
        }
    }

    /// Tells the rollback guard what the transaction just committed. After the commit has
    /// returned, which a storage does only once it is durable (PostgreSQL's durability
    /// barrier), so the record is never ahead of the stored state; best effort, since the
    /// write has happened and a record that lags only weakens the next check.
    func recordCommit() {
        guard let committed = manifestCheck.committing else { return }
        manifestCheck.committing = nil
        rollbackGuard?.record((committed.generation, committed.root, keys.keyCheck), keys: keys)
    }
}
