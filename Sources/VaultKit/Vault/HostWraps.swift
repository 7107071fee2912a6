/// The master key sealed to each host's public key (docs/FORMAT.md section 12): how the
/// rows of `vault_host_wraps` are made, checked and authenticated.
enum HostWraps {
    /// What the manifest tag covers of the wraps: `BLAKE2b-256(0x08 || for each wrap in
    /// name byte order: lp(name) || public_key || lp(sealed_master_key))`, unkeyed, since
    /// the tag around it is keyed. Any row added, removed or changed changes it.
    static func digest(_ wraps: [StoredHostWrap]) -> [UInt8] {
        var message: [UInt8] = [0x08]
        func lengthPrefixed(_ bytes: [UInt8]) {
            withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { message += $0 }
            message += bytes
        }
        for wrap in sorted(wraps) {
            lengthPrefixed(Array(wrap.name.utf8))
            message += wrap.publicKey
            lengthPrefixed(wrap.sealedMasterKey)
        }
        return Blake2b.hash(message)
    }

    /// In name byte order (what SQLite's `ORDER BY CAST(name AS BLOB)` gives).
    static func sorted(_ wraps: [StoredHostWrap]) -> [StoredHostWrap] {
        wraps.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The host rows and the vault identity's row (``IdentityRecord``), apart: the
    /// identity's row is no host, and its signature covers the host rows alone.
    static func split(_ wraps: [StoredHostWrap]) -> (hosts: [StoredHostWrap], identity: StoredHostWrap?) {
        var hosts: [StoredHostWrap] = [], identity: StoredHostWrap?
        for wrap in wraps {
            if wrap.name == IdentityRecord.rowName { identity = wrap } else { hosts.append(wrap) }
        }
        return (hosts, identity)
    }

    /// The master key sealed to `publicKey` (``HostPublicKey/seal(_:)``).
    static func seal(_ masterKey: SecureBuffer, to publicKey: HostPublicKey) throws(VaultError) -> [UInt8] {
        try publicKey.seal(masterKey)
    }

    /// The same hosts with the master key `masterKey` sealed to each (re-key, host removal).
    static func resealed(_ wraps: [StoredHostWrap], to masterKey: SecureBuffer) throws(VaultError) -> [StoredHostWrap] {
        var result: [StoredHostWrap] = []
        for wrap in wraps {
            let publicKey = try publicKey(of: wrap)
            result.append(StoredHostWrap(name: wrap.name, publicKey: wrap.publicKey, sealedMasterKey: try seal(masterKey, to: publicKey)))
        }
        return result
    }

    static func publicKey(of wrap: StoredHostWrap) throws(VaultError) -> HostPublicKey {
        do { return try HostPublicKey(bytes: wrap.publicKey) } catch { throw .corrupted(reason: .invalidHostPublicKey) }
    }

    /// The master key in the wrap for `hostKey`'s public key, or `nil` if the vault has
    /// none for it or it does not open. `hosts` must be verified (``verifiedHosts(_:vaultID:pinned:)``).
    static func open(_ hosts: [StoredHostWrap], with hostKey: HostKeyPair) -> SecureBuffer? {
        guard let wrap = hosts.first(where: { $0.publicKey == hostKey.publicKey.bytes }) else { return nil }
        return hostKey.openSealed(wrap.sealedMasterKey)
    }

    /// The host rows of `wraps` after checking that they are signed by one of the
    /// `pinned` identities, for the vault `vaultID`: what a host checks before it opens
    /// its wrap, since anyone can seal a master key to its public key.
    ///
    /// - Throws: ``VaultError/tampered(reason:)``: ``VaultError/Reason/vaultIdentityMissing``
    ///   for hosts without an identity, ``VaultError/Reason/vaultIdentityNotPinned`` for an
    ///   identity the host did not pin, ``VaultError/Reason/hostWrapsSignatureInvalid`` for
    ///   wraps it did not sign; ``VaultError/corrupted(reason:)`` for a malformed identity row.
    static func verifiedHosts(_ wraps: [StoredHostWrap], vaultID: [UInt8], pinned: [VaultIdentity]) throws(VaultError) -> [StoredHostWrap] {
        let (hosts, identityRow) = split(wraps)
        guard let identityRow else { throw .tampered(reason: .vaultIdentityMissing) }
        let record = try IdentityRecord(row: identityRow)
        guard pinned.contains(record.identity) else { throw .tampered(reason: .vaultIdentityNotPinned) }
        guard record.signs(hosts: hosts, vaultID: vaultID) else { throw .tampered(reason: .hostWrapsSignatureInvalid) }
        return hosts
    }

    /// A host name: 1 to 255 bytes of UTF-8 without control characters, since names are
    /// printed one per line by `vault host list`.
    static func validate(name: String) throws(VaultError) {
        guard !name.isEmpty, name.utf8.count <= 255 else { throw .invalidArgument(.hostNameLength) }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidArgument(.hostNameControlCharacters)
        }
    }
}
