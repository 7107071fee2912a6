/// The vault identity as stored (docs/FORMAT.md section 12.1): one reserved row of
/// `vault_host_wraps`, named `""` (no host name is empty), whose `public_key` is the
/// identity's Ed25519 public key and whose `sealed_master_key` holds
/// `0x01 || nonce (24) || crypto_secretbox(seed (32), nonce, identity key) (48) || signature (64)`.
///
/// Why in the wraps table: the identity exists only for the wraps it signs, and the
/// row is then covered by the wraps digest the manifest tag authenticates, on every
/// storage engine, without a schema change.
///
/// Why sealed under the key-encryption key and not the master key: every host learns the
/// master key, and a removed host keeps it. Only passphrase or key holders can sign.
struct IdentityRecord {
    static let rowName = ""
    static let version: UInt8 = 0x01
    static let seedByteCount = 32
    static let signatureByteCount = 64
    static let recordByteCount = 1 + SecretBox.nonceByteCount + SecretBox.tagByteCount + seedByteCount + signatureByteCount
    /// What the identity signs, before the vault id and the hosts' digest.
    static let signedDomain = Array("VaultKit host wraps, identity 1".utf8)

    let identity: VaultIdentity
    let nonce: [UInt8]
    let sealedSeed: [UInt8]
    var signature: [UInt8]

    /// Parses the reserved row, checking lengths and the version byte.
    init(row: StoredHostWrap) throws(VaultError) {
        let record = row.sealedMasterKey
        guard row.publicKey.count == VaultIdentity.byteCount, record.count == Self.recordByteCount, record[0] == Self.version else {
            throw .corrupted(reason: .invalidVaultIdentity)
        }
        identity = VaultIdentity(publicKey: row.publicKey)
        let sealedStart = 1 + SecretBox.nonceByteCount, signatureStart = record.count - Self.signatureByteCount
        nonce = Array(record[1 ..< sealedStart])
        sealedSeed = Array(record[sealedStart ..< signatureStart])
        signature = Array(record[signatureStart...])
    }

    private init(identity: VaultIdentity, nonce: [UInt8], sealedSeed: [UInt8]) {
        self.identity = identity
        self.nonce = nonce
        self.sealedSeed = sealedSeed
        signature = [UInt8](repeating: 0, count: Self.signatureByteCount)
    }

    /// The row as stored.
    var row: StoredHostWrap {
        StoredHostWrap(name: Self.rowName, publicKey: identity.publicKey, sealedMasterKey: [Self.version] + nonce + sealedSeed + signature)
    }

    /// A new identity whose seed is sealed under `keyEncryptionKey` (signature still empty).
    static func create(keyEncryptionKey: SecureBuffer) -> (IdentityRecord, seed: SecureBuffer) {
        let seed = SecureBuffer(count: seedByteCount, lockInMemory: true) { Sodium.randomBytes($0) }
        let record = sealing(seed, publicKey: publicKey(of: seed), under: keyEncryptionKey)
        return (record, seed)
    }

    private static func sealing(_ seed: SecureBuffer, publicKey: [UInt8], under keyEncryptionKey: SecureBuffer) -> IdentityRecord {
        var nonce = [UInt8](repeating: 0, count: SecretBox.nonceByteCount)
        let sealed = nonce.withUnsafeMutableBytes { nonce in
            SecretBox.seal(plaintextCount: seedByteCount, key: sealingKey(keyEncryptionKey), nonce: nonce) { plaintext in
                seed.withBytes { plaintext.copyMemory(from: $0) }
            }
        }
        return IdentityRecord(identity: VaultIdentity(publicKey: publicKey), nonce: nonce, sealedSeed: sealed)
    }

    /// The seed, opened with `keyEncryptionKey` and checked against the stored public key.
    ///
    /// - Throws: ``VaultError/tampered(reason:)`` when it does not open or is another key's.
    func seed(keyEncryptionKey: SecureBuffer) throws(VaultError) -> SecureBuffer {
        let opened = sealedSeed.withUnsafeBytes { sealed in
            nonce.withUnsafeBytes { nonce in SecretBox.open(sealed: sealed, nonce: nonce, key: Self.sealingKey(keyEncryptionKey), lockInMemory: true) }
        }
        guard let opened, Self.publicKey(of: opened) == identity.publicKey else { throw .tampered(reason: .vaultIdentityDoesNotOpen) }
        return opened
    }

    /// The same identity and signature with the seed sealed under a new key-encryption key.
    func resealed(from oldKeyEncryptionKey: SecureBuffer, to newKeyEncryptionKey: SecureBuffer) throws(VaultError) -> IdentityRecord {
        var record = Self.sealing(try seed(keyEncryptionKey: oldKeyEncryptionKey), publicKey: identity.publicKey, under: newKeyEncryptionKey)
        record.signature = signature
        return record
    }

    /// Signs `hosts` (the wraps without this row) of the vault `vaultID`.
    mutating func sign(hosts: [StoredHostWrap], vaultID: [UInt8], seed: SecureBuffer) {
        signature = IdentitySigning.signature(of: Self.signedMessage(hosts: hosts, vaultID: vaultID), seed: seed)
    }

    /// Whether the stored signature covers exactly `hosts` of the vault `vaultID`.
    func signs(hosts: [StoredHostWrap], vaultID: [UInt8]) -> Bool {
        identity.isSignature(signature, of: Self.signedMessage(hosts: hosts, vaultID: vaultID))
    }

    /// `"VaultKit host wraps, identity 1" || vault_id (16) || hosts digest (32)`: the
    /// digest covers each host's name, public key and sealed master key, so the signature
    /// binds the master key a host will open to this vault's identity.
    static func signedMessage(hosts: [StoredHostWrap], vaultID: [UInt8]) -> [UInt8] {
        signedDomain + vaultID + HostWraps.digest(hosts)
    }

    /// `BLAKE2b-256(key = KEK, "VaultKit vault identity, format 3")`: the identity's own
    /// key, apart from the one wrapping the master key.
    private static func sealingKey(_ keyEncryptionKey: SecureBuffer) -> SecureBuffer {
        Blake2b.derivedKey(Array("VaultKit vault identity, format 3".utf8), key: keyEncryptionKey)
    }

    private static func publicKey(of seed: SecureBuffer) -> [UInt8] {
        IdentitySigning.publicKey(seed: seed)
    }
}
