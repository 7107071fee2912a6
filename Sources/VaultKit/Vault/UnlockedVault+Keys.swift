/// The keys: unwrapping and wrapping the master key, and following a re-key made by
/// another process.
extension UnlockedVault {
    /// Unwraps the master key in `header` with `keyEncryptionKey` under the rules of the
    /// header's format version (or of `formatVersion`), or `nil` if it does not open.
    static func unwrapMasterKey(_ header: VaultHeader, with keyEncryptionKey: SecureBuffer, asFormat formatVersion: Int? = nil) -> SecureBuffer? {
        let wrappingKey = KeyHierarchy.wrappingKey(keyEncryptionKey: keyEncryptionKey, formatVersion: formatVersion ?? header.formatVersion)
        return header.wrappedMasterKey.withUnsafeBytes { wrapped in
            header.masterKeyNonce.withUnsafeBytes { nonce in
                SecretBox.open(sealed: wrapped, nonce: nonce, key: wrappingKey, lockInMemory: true)
            }
        }
    }

    /// Wraps `masterKey` under `keyEncryptionKey` with a fresh nonce, for the current format.
    static func wrap(masterKey: SecureBuffer, with keyEncryptionKey: SecureBuffer) -> (nonce: [UInt8], wrapped: [UInt8]) {
        let wrappingKey = KeyHierarchy.wrappingKey(keyEncryptionKey: keyEncryptionKey, formatVersion: VaultHeader.currentFormatVersion)
        var nonce = [UInt8](repeating: 0, count: SecretBox.nonceByteCount)
        let wrapped = nonce.withUnsafeMutableBytes { nonce in
            SecretBox.seal(plaintextCount: masterKey.count, key: wrappingKey, nonce: nonce) {
                plaintext in masterKey.withBytes { plaintext.copyMemory(from: $0) }
            }
        }
        return (nonce, wrapped)
    }

    /// The master key of `header` as this handle unlocks it: through the header's wrap
    /// with the key-encryption key, or through this host's wrap.
    func unwrapMasterKey(_ header: VaultHeader) throws(VaultError) -> SecureBuffer? {
        if let keyEncryptionKey { return Self.unwrapMasterKey(header, with: keyEncryptionKey) }
        guard let hostKey, let wraps = try store.readHostWraps() else { return nil }
        // Re-keyed wraps are trusted only when the pinned identity signed them.
        return HostWraps.open(try HostWraps.verifiedHosts(wraps, vaultID: header.vaultID, pinned: hostPins), with: hostKey)
    }

    /// Follows a re-key made by another process since this one unlocked the vault.
    ///
    /// Called inside every write transaction, so no item is ever sealed under a master
    /// key the file no longer holds, and after a read that failed to authenticate.
    /// - Returns: whether the keys changed.
    @discardableResult
    mutating func refreshKeysIfRekeyed() throws(VaultError) -> Bool {
        guard try store.readMasterKeyCheck() != keys.keyCheck else { return false }
        let newHeader = try store.readHeader()
        guard let masterKey = try unwrapMasterKey(newHeader) else { throw .keyChanged }
        let newKeys = KeyHierarchy(masterKey: masterKey)
        guard newKeys.keyCheck == newHeader.masterKeyCheck else { throw .tampered(reason: .keyCheckMismatch) }
        keys = newKeys
        header = newHeader
        manifestCheck.keysChanged()
        return true
    }
}
