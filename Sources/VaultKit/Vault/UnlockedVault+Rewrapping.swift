/// Changing what unlocks the vault (the passphrase or raw key that wraps the master key)
/// and the master key itself, and following such a change made by another process.
extension UnlockedVault {
    /// What is to wrap the master key from the next commit on: the header's key source,
    /// the key-encryption key, and the passphrase it was derived from (kept by the handle).
    struct NewWrapping {
        let keySource: VaultHeader.KeySource
        let keyEncryptionKey: SecureBuffer
        let passphrase: SecretBytes?

        /// A fresh salt and the key `passphrase` derives with it. Argon2id is blocking
        /// work: it runs on the caller's thread (an async caller's is the vault's queue),
        /// before any lock is taken.
        init(passphrase: SecretBytes, kdf: KDFParameters, noting path: String) throws(VaultError) {
            try Sodium.ensureInitialized()
            let salt = Sodium.randomBytes(count: PassphraseKDF.saltByteCount)
            #if DEBUG
            BlockingWorkProbe.note(path)
            #endif
            keySource = .passphrase(salt: salt, parameters: kdf)
            keyEncryptionKey = try PassphraseKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: kdf)
            self.passphrase = passphrase
        }

        init(key: VaultKey) {
            keySource = .rawKey
            keyEncryptionKey = key.withUnsafeBytes { SecureBuffer(copying: $0, lockInMemory: true) }
            passphrase = nil
        }
    }

    /// The handle's own copy of a passphrase, locked in memory and wiped with the handle,
    /// independent of the caller's copy.
    static func held(_ passphrase: SecretBytes) -> SecretBytes {
        passphrase.withUnsafeBytes { SecretBytes(storage: SecureBuffer(copying: $0, lockInMemory: true)) }
    }

    /// Wraps `masterKey` into `header` under `keyEncryptionKey`, recorded as `keySource`:
    /// the one place a header's key wrapping is written for a new passphrase, key or
    /// master key, inside the write transaction that stores the header.
    func rewrapHeader(_ header: inout VaultHeader, masterKey: SecureBuffer, keySource: VaultHeader.KeySource, keyEncryptionKey: SecureBuffer) throws(VaultError) {
        let (nonce, wrapped) = Self.wrap(masterKey: masterKey, with: keyEncryptionKey)
        header.keySource = keySource
        header.masterKeyNonce = nonce
        header.wrappedMasterKey = wrapped
    }

    /// Re-wraps the current master key for `wrapping`, in one O(1) transaction.
    mutating func rewrap(_ wrapping: NewWrapping) throws(VaultError) {
        try rollbackGuard?.ensureRecordable()
        manifestCheck.committing = nil
        let header = try store.writeTransaction { () throws(VaultError) -> VaultHeader in
            try refreshKeysIfRekeyed()
            // As stored, so the new tag covers the host wraps as they are now.
            var header = try store.readHeader()
            try rewrapHeader(&header, masterKey: keys.masterKey, keySource: wrapping.keySource, keyEncryptionKey: wrapping.keyEncryptionKey)
            // The identity's secret half is sealed under the KEK: sealed anew for the new one.
            let resealedWraps = try wrapsWithIdentityResealed(under: wrapping.keyEncryptionKey)
            if let resealedWraps { header.hostWrapsDigest = HostWraps.digest(resealedWraps) }
            // The manifest tag covers the header: re-tag the (verified) root for the new one.
            try retagManifestRoot(for: header)
            try store.updateKeyWrapping(header)
            if let resealedWraps { try store.replaceHostWraps(resealedWraps) }
            return header
        }
        self.header = header
        keyEncryptionKey = wrapping.keyEncryptionKey
        passphrase = wrapping.passphrase.map(Self.held)
        recordCommit()
    }

    /// Replaces the master key with a new random one and re-seals every item, every host
    /// wrap (but `removedHost`'s, which is dropped) and the header's wrap under it, in one
    /// transaction; with `wrapping`, the header's wrap is for that new passphrase or key.
    mutating func rekey(removingHost removedHost: String?, wrapping: NewWrapping?) throws(VaultError) {
        guard let keyEncryptionKey = wrapping?.keyEncryptionKey ?? self.keyEncryptionKey else {
            throw .invalidArgument(.rekeyNeedsPassphraseOrKey)
        }
        try rollbackGuard?.ensureRecordable()
        manifestCheck.committing = nil
        let (newKeys, header) = try store.writeTransaction { () throws(VaultError) -> (KeyHierarchy, VaultHeader) in
            try refreshKeysIfRekeyed()
            // A fresh manifest is built from the rows: they must be the right ones.
            try ensureManifestVerified(bucket: nil)
            // Read while the stored header and wraps still match the tag.
            var (header, generation) = try verifiedHeaderAndGeneration()
            generation += 1
            // Re-wrapping under a key-encryption key the stored wrap no longer opens would
            // undo another process's change of the passphrase (or key): follow it first.
            if wrapping == nil, Self.unwrapMasterKey(header, with: keyEncryptionKey) == nil { throw .keyChanged }
            let storedWraps = try store.readHostWraps().map(HostWraps.split)
            var hostWraps = storedWraps?.hosts
            if let removedHost {
                let named = { (wrap: StoredHostWrap) in wrap.name.utf8.elementsEqual(removedHost.utf8) }
                guard hostWraps?.contains(where: named) == true else { throw .invalidArgument(.noSuchHost) }
                hostWraps?.removeAll(where: named)
            }
            let newKeys = KeyHierarchy(masterKey: KeyHierarchy.randomMasterKey())
            // One item at a time, from a list of row ids (32 bytes each): holding every
            // re-sealed item at once cost about five times the vault's size in memory.
            var oldIDs: [[UInt8]] = []
            try store.forEachRowIdentity(in: nil) { (lookupID, _, _) throws(VaultError) in oldIDs.append(Array(lookupID)) }
            for oldID in oldIDs {
                let current = self
                let sealed = try store.withSealedItem(lookupID: oldID) { (serviceTag, nonce, sealed) throws(VaultError) in
                    // Every kind of row, re-sealed to the row ids of its kind under the new keys.
                    let row = StoredRow(lookupID: oldID, serviceTag: Array(serviceTag), nonce: Array(nonce), sealed: Array(sealed))
                    return try current.resealed(row, under: newKeys)
                }
                guard let sealed else { throw .corrupted(reason: .rowVanishedDuringRekey) }
                _ = try store.delete(lookupID: oldID)
                // New row ids are hashes under the new key: meeting an old one is a 2^-256 event.
                guard try insertIfAbsent(sealed) else { throw .corrupted(reason: .rekeyedRowIDInUse) }
            }
            if let hostWraps {
                // Signed anew: the wraps now seal the new master key; and with a new
                // passphrase or key, the identity's seed is sealed under its KEK.
                var resealed = try signedHostWraps(
                    try HostWraps.resealed(hostWraps, to: newKeys.masterKey),
                    identityRow: storedWraps?.identity, vaultID: header.vaultID
                )
                if let wrapping, let withNewKEK = try identityResealed(in: resealed, to: wrapping.keyEncryptionKey) {
                    resealed = withNewKEK
                }
                try store.replaceHostWraps(resealed)
                header.hostWrapsDigest = HostWraps.digest(resealed)
            } else {
                header.hostWrapsDigest = nil
            }
            try rewrapHeader(&header, masterKey: newKeys.masterKey, keySource: wrapping?.keySource ?? header.keySource, keyEncryptionKey: keyEncryptionKey)
            header.masterKeyCheck = newKeys.keyCheck
            try store.updateKeyWrapping(header)
            let root = try Self.rebuildManifest(store: store, keys: newKeys, header: header, generation: generation)
            manifestCheck.committing = (generation, root)
            return (newKeys, header)
        }
        keys = newKeys
        self.header = header
        if let wrapping {
            self.keyEncryptionKey = wrapping.keyEncryptionKey
            passphrase = wrapping.passphrase.map(Self.held)
        }
        manifestCheck.keysChanged()
        recordCommit()
    }

    /// A row (an item, a kept version, the settings) opened under the current keys and
    /// sealed again under `newKeys`, with its row ids for its kind.
    private func resealed(_ row: StoredRow, under newKeys: KeyHierarchy) throws(VaultError) -> SealedItem {
        switch try openScannedRow(row) {
        case .settings(let settings):
            return Self.seal(settings, keys: newKeys)
        case .record(let (item, plaintext, range, provenance)):
            let (lookupID, serviceTag) = provenance.archive == nil
                ? (newKeys.lookupID(service: item.service, account: item.account), newKeys.serviceTag(service: item.service))
                : (newKeys.versionLookupID(service: item.service, account: item.account, number: provenance.number),
                   newKeys.historyTag(service: item.service, account: item.account))
            return Self.seal(item, secret: SecretBytes(record: plaintext, range: range), provenance: provenance,
                             lookupID: lookupID, serviceTag: serviceTag, keys: newKeys)
        }
    }

    /// Follows a change of the header's wrapping that this handle's key-encryption key
    /// cannot open: re-derives the key from the passphrase it holds, with the salt and
    /// cost now stored, and takes the master key it opens. Outside any transaction, so
    /// other processes' writes do not wait for Argon2id.
    ///
    /// - Returns: whether the handle now holds the vault's current keys; `false` when it
    ///   holds no passphrase, or its passphrase no longer opens the vault.
    mutating func followChangedWrapping() throws(VaultError) -> Bool {
        guard let passphrase else { return false }
        let stored = try store.readHeader()
        // Another vault created in this one's place (a PostgreSQL vault dropped and made
        // again) with the same passphrase is not this vault: not followed.
        guard stored.vaultID == header.vaultID else { return false }
        let followed: SecureBuffer
        if let held = keyEncryptionKey, Self.unwrapMasterKey(stored, with: held) != nil {
            // Already followed: one call can meet the same change twice, in its own work and
            // in the rollback guard's comparison after it, and the first follow serves both.
            followed = held
        } else {
            // The same salt and cost as the key held, which failed: the passphrase changed.
            guard case .passphrase(let salt, let parameters) = stored.keySource, stored.keySource != header.keySource else { return false }
            #if DEBUG
            BlockingWorkProbe.note(store.storage.location)
            #endif
            followed = try PassphraseKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
        guard let masterKey = Self.unwrapMasterKey(stored, with: followed) else { return false }
        let newKeys = KeyHierarchy(masterKey: masterKey)
        guard newKeys.keyCheck == stored.masterKeyCheck else { throw .tampered(reason: .keyCheckMismatch) }
        if newKeys.keyCheck != keys.keyCheck {
            keys = newKeys
            manifestCheck.keysChanged()
        }
        header = stored
        keyEncryptionKey = followed
        return true
    }
}
