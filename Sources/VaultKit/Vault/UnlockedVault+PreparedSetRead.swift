#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A lone `set` that keeps a version, in a bucket verified but not kept (after
/// ``Vault/verify()``, which checks every row and keeps none, or once the kept rows were
/// dropped): the bucket is read whole without the lock, as a read verifies it, so the
/// `set` is prepared (``commitPreparedSet(_:service:account:label:generic:keepHistory:)``).
///
/// Why: without those rows such a `set` ran the full write transaction, which holds the
/// vault's one header row lock across its round trips (the lock, the item's row and its
/// versions read, the writes, the commit): under load writers queued on that lock. A
/// `set` without history does not need this: its early insert is sent with the lock.
/// The read changes no guarantee: the prepared set is still checked under the lock
/// against every row, digest and header it was built on, and a refused one falls back to
/// the write transaction as before, with no retry.
extension UnlockedVault {
    /// Reads and keeps the bucket of the item a history `set` writes, if a prepared set
    /// needs it and this process does not keep it, verifying it (and the root, if another
    /// process wrote since) in one read snapshot; and the retention, once per handle. A
    /// state another process committed is compared with the rollback record before
    /// anything is written on top of it, as a write transaction compares what it verifies
    /// under the lock.
    mutating func keepBucketForPreparedSet(service: String, account: String, keepHistory: Bool) throws(VaultError) {
        guard keepHistory, store.commitsPreparedSets else { return }
        let lookupID = keys.lookupID(service: service, account: account)
        let bucket = Manifest.bucket(of: lookupID)
        let verified = manifestCheck.verified
        var read = false
        if verified.bucket(bucket) == nil, verified.hasRoom {
            // Verified but not kept: read again, whole, so its rows are kept.
            manifestCheck.forget(bucket: bucket)
            try verifyManifestFollowingRekey(bucket: bucket)
            read = true
        }
        // Needed by a `set` over an existing item; read with a bucket read anyway, so a
        // new item's `set` leaves none for the next `set` to read.
        if verified.retention == nil, read || verified.bucket(bucket)?.rows[lookupID] != nil {
            // Its settings row, with its bucket verified (checked again under the lock).
            try store.readTransaction { () throws(VaultError) in _ = try historyRetentionInTransaction() }
        }
        try checkPendingRollbackGuard()
    }
}
