/// Moving an older vault file to the current format (docs/FORMAT.md section 1), once,
/// in one transaction.
///
/// - Format 2 has a manifest, but one that XORs its terms (a row stored twice cancels
///   out) and whose tag covers only the root. Its manifest is verified whole, under
///   format 2's rules, before anything is rewritten, so the upgrade never launders a
///   tampered file.
/// - Format 1 has no manifest: nothing can be verified, and the upgrade accepts its rows
///   as they are. That is why it happens only when asked for
///   (``Vault/upgrade(at:passphrase:busyTimeout:)``), never on a plain open.
///
/// Either way the master key is re-wrapped under the format-3 wrapping key, so the
/// upgraded file can never again be read as an older format.
///
/// - Format 3 differs from 4 only in what its records may hold (format 4 adds kept
///   versions, the settings row and record version 2; docs/FORMAT.md section 14). Its
///   manifest is verified whole under format 3's rules, then the header says 4 and the
///   root is tagged again at the next generation: O(n) reading, O(1) writing, any
///   storage (no schema change), and a host key can do it. A format-4 vault relabelled
///   3 fails that check (the tag covers the version), and is reported as downgraded.
enum FormatUpgrade {
    /// Whether opening a vault with `header` upgrades it: any older format, except a
    /// format-3 vault that can only be read (read-only media), which is read as it is:
    /// format 3 is complete without history, and refusing it would lock out a backup.
    static func isDue(_ header: VaultHeader, in store: VaultStore) -> Bool {
        guard header.formatVersion < VaultHeader.currentFormatVersion else { return false }
        guard header.formatVersion == 3 else { return true }
        return (store.storage as? any FormatUpgradingStorage)?.isReadOnly != true
    }

    /// Upgrades the vault to ``VaultHeader/currentFormatVersion``; returns its new header.
    static func run(_ store: VaultStore, keys: KeyHierarchy, keyEncryptionKey: SecureBuffer?, upgradingFormatOne: Bool) throws(VaultError) -> VaultHeader {
        try store.writeTransaction { () throws(VaultError) -> VaultHeader in
            var header = try store.readHeader()
            guard header.formatVersion < VaultHeader.currentFormatVersion else { return header }  // another process upgraded it
            guard header.masterKeyCheck == keys.keyCheck else { throw .keyChanged }
            try store.checkSchema(formatVersion: header.formatVersion)
            if header.formatVersion == 3 { return try upgradeFormatThree(store, keys: keys, header: header) }
            // Formats 1 and 2 are re-wrapped: only a passphrase or key holder opens them.
            guard let keyEncryptionKey else { throw .wrongPassphrase }
            switch header.formatVersion {
            case 1:
                guard upgradingFormatOne else { throw .formatUpgradeRequired(version: 1) }
                try store.addManifestSchema()
            default:
                try verifyFormatTwoManifest(store, keys: keys)
            }
            let (nonce, wrapped) = UnlockedVault.wrap(masterKey: keys.masterKey, with: keyEncryptionKey)
            header.formatVersion = VaultHeader.currentFormatVersion
            header.masterKeyNonce = nonce
            header.wrappedMasterKey = wrapped
            try store.updateKeyWrapping(header)
            try store.setFormatVersion(header.formatVersion)
            try store.addGenerationTable(startingAt: 1)
            try UnlockedVault.rebuildManifest(store: store, keys: keys, header: header, generation: 1)
            return header
        }
    }

    /// Verifies a format-3 vault's manifest whole and relabels it as the current format,
    /// re-tagged at the next generation.
    private static func upgradeFormatThree(_ store: VaultStore, keys: KeyHierarchy, header: VaultHeader) throws(VaultError) -> VaultHeader {
        let (rootBytes, tagBytes) = try store.readManifestRoot()
        guard let rootBytes, let tagBytes, let root = rootBytes.withUnsafeBytes({ ManifestDigest(bytes: $0) }),
              let tag = tagBytes.withUnsafeBytes({ ManifestDigest(bytes: $0) })
        else { throw .tampered(reason: .manifestRootMissing) }
        let generation = try store.readGeneration()
        var upgraded = header
        upgraded.formatVersion = VaultHeader.currentFormatVersion
        guard keys.manifestRootTag(root, header: header, generation: generation) == tag else {
            // Tagged as a format-4 header: a newer vault whose version was edited down.
            if keys.manifestRootTag(root, header: upgraded, generation: generation) == tag { throw .tampered(reason: .formatDowngraded) }
            throw .tampered(reason: .headerFailedAuthentication)
        }
        var stored = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
        var storedRoot = ManifestDigest.zero
        try store.forEachManifestBucket { (bucket, bytes) throws(VaultError) in
            guard (0..<Int64(Manifest.bucketCount)).contains(bucket), let digest = ManifestDigest(bytes: bytes), !digest.isZero else {
                throw .tampered(reason: .invalidManifestBucket)
            }
            stored[Int(bucket)] = digest
            storedRoot += keys.manifestBucketTerm(bucket: Int(bucket), digest: digest)
        }
        guard storedRoot == root else { throw .tampered(reason: .manifestBucketsMismatch) }
        guard try UnlockedVault.computeDigests(store: store, keys: keys, bucket: nil) == stored else { throw .tampered(reason: .rowsChanged) }
        try store.setFormatVersion(upgraded.formatVersion)
        try store.writeManifestRoot(root, tag: keys.manifestRootTag(root, header: upgraded, generation: generation + 1), generation: generation + 1)
        return upgraded
    }

    /// Checks a format-2 manifest whole: the root's tag `H(0x05 || root)`, the stored
    /// buckets against the root, and the rows against the buckets, all combined with XOR.
    private static func verifyFormatTwoManifest(_ store: VaultStore, keys: KeyHierarchy) throws(VaultError) {
        let (rootBytes, tagBytes) = try store.readManifestRoot()
        guard let rootBytes, let tagBytes,
              let root = rootBytes.withUnsafeBytes({ ManifestDigest(bytes: $0) }),
              let tag = tagBytes.withUnsafeBytes({ ManifestDigest(bytes: $0) }),
              keys.legacyManifestRootTag(root) == tag
        else { throw .tampered(reason: .manifestRootFailedAuthentication) }
        var stored = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
        var storedRoot = ManifestDigest.zero
        try store.forEachManifestBucket { (bucket, bytes) throws(VaultError) in
            guard (0..<Int64(Manifest.bucketCount)).contains(bucket), let digest = ManifestDigest(bytes: bytes), !digest.isZero else {
                throw .tampered(reason: .invalidManifestBucket)
            }
            stored[Int(bucket)] = digest
            storedRoot = storedRoot ^ keys.manifestBucketTerm(bucket: Int(bucket), digest: digest)
        }
        guard storedRoot == root else { throw .tampered(reason: .manifestBucketsMismatch) }
        let computed = try UnlockedVault.computeDigests(store: store, keys: keys, bucket: nil) { $0 = $0 ^ $1 }
        guard computed == stored else { throw .tampered(reason: .rowsChanged) }
    }
}
