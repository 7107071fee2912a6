#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UnlockedVault {
    /// A `set` in a transaction of its own (``Vault/set(_:service:account:label:generic:keepHistory:)``).
    ///
    /// On a storage where every call is a round trip (``OpeningInsertStorage``) the item
    /// is sealed as a new one before the lock, and its insert travels with the lock
    /// (``OpeningInsert``): one round trip fewer. That is only done when this process has
    /// verified the item's manifest bucket, so the transaction needs no read before the
    /// insert; the storage undoes the early insert if anything committed since, and the
    /// `set` then runs as any other.
    mutating func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws(VaultError) {
        try Self.validateWrite(secret: secret, service: service, account: account, generic: generic)
        try keepBucketForPreparedSet(service: service, account: account, keepHistory: keepHistory)
        if try commitPreparedSet(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory) { return }
        guard let opening = try sealedForOpeningInsert(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory) else {
            return try writeTransaction { (vault) throws(VaultError) in
                try vault.write(.set, secret: secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            }
        }
        let keyCheck = keys.keyCheck
        let insert = OpeningInsert(row: opening.sealed.row, snapshotVersion: manifestCheck.dataVersion, keyCheck: keyCheck)
        try writeTransaction(opening: insert) { (vault) throws(VaultError) in
            // Re-keyed by another process (the storage undid the early insert): sealed
            // under keys the vault no longer has, so written afresh.
            guard vault.keys.keyCheck == keyCheck else {
                return try vault.write(.set, secret: secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            }
            // Costs nothing when the bucket is still verified (the early insert was kept).
            try vault.ensureManifestVerified(bucket: Manifest.bucket(of: opening.sealed.lookupID))
            vault.pendingInserts.append(opening)
        }
    }

    /// The item sealed as new, as `write(.set, ...)` would gather it, or `nil` when an
    /// early insert would not pay: a storage that does not gather inserts, or a bucket
    /// whose verification must be read first.
    private func sealedForOpeningInsert(
        _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool
    ) throws(VaultError) -> PendingInserts.Entry? {
        guard store.sendsOpeningInserts else { return nil }
        try Self.validateWrite(secret: secret, service: service, account: account, generic: generic)
        let lookupID = keys.lookupID(service: service, account: account)
        guard manifestCheck.covers(bucket: Manifest.bucket(of: lookupID)) else { return nil }
        let sealed = sealedAsNew(.set, secret, service: service, account: account, label: label, generic: generic,
                                 lookupID: lookupID, serviceTag: keys.serviceTag(service: service))
        return .init(sealed: sealed, secret: secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }
}
