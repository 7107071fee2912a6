/// Signing the host wraps with the vault identity (``IdentityRecord``), which needs the
/// key-encryption key: every writer of the wraps (add, remove, re-key, passphrase change) has it.
extension UnlockedVault {
    /// `hosts` and the identity row signing them for the vault `vaultID`, in name order;
    /// the identity is created when `identityRow` is `nil`.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for a handle opened with a host key,
    ///   ``VaultError/tampered(reason:)`` when the stored identity does not open.
    func signedHostWraps(_ hosts: [StoredHostWrap], identityRow: StoredHostWrap?, vaultID: [UInt8]) throws(VaultError) -> [StoredHostWrap] {
        guard let keyEncryptionKey else { throw .invalidArgument(.hostChangeNeedsPassphraseOrKey) }
        var record: IdentityRecord, seed: SecureBuffer
        if let identityRow {
            record = try IdentityRecord(row: identityRow)
            seed = try identitySeed(record, keyEncryptionKey: keyEncryptionKey)
        } else {
            (record, seed) = IdentityRecord.create(keyEncryptionKey: keyEncryptionKey)
        }
        record.sign(hosts: hosts, vaultID: vaultID, seed: seed)
        return HostWraps.sorted(hosts + [record.row])
    }

    /// The stored wraps with the identity's seed sealed under `newKeyEncryptionKey`
    /// instead (a passphrase or key change), or `nil` when the vault has no identity.
    /// The signature stays: the host rows do not change.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for a handle opened with a host key
    ///   (it could not reseal the identity, which would be lost).
    func wrapsWithIdentityResealed(under newKeyEncryptionKey: SecureBuffer) throws(VaultError) -> [StoredHostWrap]? {
        guard let wraps = try store.readHostWraps() else { return nil }
        return try identityResealed(in: wraps, to: newKeyEncryptionKey)
    }

    /// `wraps` with the identity's seed sealed under `newKeyEncryptionKey` instead of this
    /// handle's key-encryption key, or `nil` when they hold no identity (`vault passwd`'s
    /// re-key seals it anew in the same transaction).
    func identityResealed(in wraps: [StoredHostWrap], to newKeyEncryptionKey: SecureBuffer) throws(VaultError) -> [StoredHostWrap]? {
        let (hosts, identityRow) = HostWraps.split(wraps)
        guard let identityRow else { return nil }
        guard let keyEncryptionKey else { throw .invalidArgument(.hostChangeNeedsPassphraseOrKey) }
        let record = try IdentityRecord(row: identityRow)
        _ = try identitySeed(record, keyEncryptionKey: keyEncryptionKey)
        return HostWraps.sorted(hosts + [try record.resealed(from: keyEncryptionKey, to: newKeyEncryptionKey).row])
    }

    /// The identity's seed, opened with this handle's key-encryption key.
    ///
    /// - Throws: ``VaultError/keyChanged`` when another process changed the passphrase or
    ///   key since this handle unlocked (the header's wrap no longer opens with it either),
    ///   rather than calling that tampering; ``VaultError/tampered(reason:)`` otherwise.
    func identitySeed(_ record: IdentityRecord, keyEncryptionKey: SecureBuffer) throws(VaultError) -> SecureBuffer {
        do {
            return try record.seed(keyEncryptionKey: keyEncryptionKey)
        } catch {
            if Self.unwrapMasterKey(try store.readHeader(), with: keyEncryptionKey) == nil { throw .keyChanged }
            throw error
        }
    }
}
