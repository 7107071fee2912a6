/// The vault's one header row: format version, how to derive the key-encryption key,
/// and the master key wrapped under it.
package struct VaultHeader: Sendable {
    /// How the key-encryption key (KEK) is obtained.
    package enum KeySource: Sendable, Equatable {
        /// Argon2id over the passphrase with this salt and these limits.
        case passphrase(salt: [UInt8], parameters: KDFParameters)
        /// The caller's raw 32-byte key is the KEK.
        case rawKey
    }

    /// 2 added the manifest; 3 made it count rows (a sum instead of XOR), authenticated
    /// the whole header with it, and bound the key wrapping to the format; 4 added item
    /// history (kept versions, the settings row, record version 2) (docs/FORMAT.md).
    /// A format-2 or 3 vault is verified and upgraded when opened for writing; a format-1
    /// vault, which has nothing to verify, only by an explicit ``Vault/upgrade(at:passphrase:busyTimeout:)``.
    package static let currentFormatVersion = 4
    /// The first version whose master key is wrapped under a key derived for the format,
    /// so that its file cannot be passed off as an older version.
    static let boundWrappingFormatVersion = 3
    static let vaultIDByteCount = 16

    package var formatVersion: Int
    package var vaultID: [UInt8]
    package var keySource: KeySource
    /// The secretbox nonce used to wrap the master key.
    package var masterKeyNonce: [UInt8]
    /// `crypto_secretbox_easy(masterKey, masterKeyNonce, KEK)`: 48 bytes.
    package var wrappedMasterKey: [UInt8]
    /// Subkey 3 of the master key, so a process can tell the vault was re-keyed.
    package var masterKeyCheck: [UInt8]
    /// The digest of the host key wraps (docs/FORMAT.md section 12), or `nil` when the
    /// vault has none: not a column, but read with the header so that every manifest tag
    /// covers the wraps too.
    package var hostWrapsDigest: [UInt8]? = nil

    package init(formatVersion: Int, vaultID: [UInt8], keySource: KeySource, masterKeyNonce: [UInt8], wrappedMasterKey: [UInt8], masterKeyCheck: [UInt8]) {
        self.formatVersion = formatVersion
        self.vaultID = vaultID
        self.keySource = keySource
        self.masterKeyNonce = masterKeyNonce
        self.wrappedMasterKey = wrappedMasterKey
        self.masterKeyCheck = masterKeyCheck
    }

    /// Checks lengths and bounds of values read from disk, so a damaged header is
    /// reported as such instead of reaching libsodium.
    package func validated() throws(StorageError) -> VaultHeader {
        guard vaultID.count == Self.vaultIDByteCount,
              masterKeyNonce.count == SecretBox.nonceByteCount,
              wrappedMasterKey.count == SecretBox.tagByteCount + SecretBox.keyByteCount,
              masterKeyCheck.count == 32
        else { throw .corrupted(reason: .invalidHeaderFieldLength) }
        if case .passphrase(let salt, _) = keySource, salt.count != PassphraseKDF.saltByteCount {
            throw .corrupted(reason: .invalidHeaderFieldLength)
        }
        return self
    }

    /// The header fields the manifest tag authenticates, in the order and encoding of
    /// docs/FORMAT.md section 6: every column but the manifest's own.
    var authenticatedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(200)
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func lengthPrefixed(_ value: [UInt8]) { u32(UInt32(value.count)); bytes += value }
        u32(UInt32(formatVersion))
        bytes += vaultID
        switch keySource {
        case .passphrase(let salt, let parameters):
            lengthPrefixed(Array("argon2id13".utf8))
            lengthPrefixed(salt)
            u64(parameters.opsLimit)
            u64(UInt64(parameters.memoryLimit))
        case .rawKey:
            lengthPrefixed(Array("raw".utf8))
            lengthPrefixed([])
            u64(0)
            u64(0)
        }
        bytes += masterKeyNonce
        bytes += wrappedMasterKey
        bytes += masterKeyCheck
        if let hostWrapsDigest { bytes += hostWrapsDigest }
        return bytes
    }
}
