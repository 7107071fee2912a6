/// The vault's one header row: format version, how to derive the key-encryption key,
/// and the master key wrapped under it.
struct VaultHeader: Sendable {
    /// How the key-encryption key (KEK) is obtained.
    enum KeySource: Sendable, Equatable {
        /// Argon2id over the passphrase with this salt and these limits.
        case passphrase(salt: [UInt8], parameters: KDFParameters)
        /// The caller's raw 32-byte key is the KEK.
        case rawKey
    }

    /// 2 added the manifest (docs/FORMAT.md); a format-1 vault is upgraded when opened.
    static let currentFormatVersion = 2
    static let vaultIDByteCount = 16

    var formatVersion: Int
    var vaultID: [UInt8]
    var keySource: KeySource
    /// The secretbox nonce used to wrap the master key.
    var masterKeyNonce: [UInt8]
    /// `crypto_secretbox_easy(masterKey, masterKeyNonce, KEK)`: 48 bytes.
    var wrappedMasterKey: [UInt8]
    /// Subkey 3 of the master key, so a process can tell the vault was re-keyed.
    var masterKeyCheck: [UInt8]

    /// Checks lengths and bounds of values read from disk, so a damaged header is
    /// reported as such instead of reaching libsodium.
    func validated() throws(VaultError) -> VaultHeader {
        guard vaultID.count == Self.vaultIDByteCount,
              masterKeyNonce.count == SecretBox.nonceByteCount,
              wrappedMasterKey.count == SecretBox.tagByteCount + SecretBox.keyByteCount,
              masterKeyCheck.count == 32
        else { throw .corrupted(reason: "invalid header field length") }
        if case .passphrase(let salt, _) = keySource, salt.count != PassphraseKDF.saltByteCount {
            throw .corrupted(reason: "invalid header field length")
        }
        return self
    }
}
