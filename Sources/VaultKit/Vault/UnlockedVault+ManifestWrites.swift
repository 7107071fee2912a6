/// Recording a write transaction's row changes and applying them to the stored buckets
/// and root just before the commit, or rebuilding the whole manifest (re-key, upgrade).
extension UnlockedVault {
    /// Records that a row version read from the file left the vault.
    func recordManifestRemoval(lookupID: UnsafeRawBufferPointer, serviceTag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer) throws(VaultError) {
        guard Manifest.isRowIdentity(lookupID.count, serviceTag.count, nonce.count) else { throw Manifest.badRow }
        recordManifestTerm(lookupID, serviceTag, nonce, .removed)
        if manifestCheck.verified.bucket(Manifest.bucket(of: lookupID)) != nil {
            manifestCheck.verified.record(lookupID: Array(lookupID), row: nil)
        }
    }

    /// The same, for a row identity held in arrays.
    func recordManifestRemoval(lookupID: [UInt8], serviceTag: [UInt8], nonce: [UInt8]) throws(VaultError) {
        guard Manifest.isRowIdentity(lookupID.count, serviceTag.count, nonce.count) else { throw Manifest.badRow }
        lookupID.withUnsafeBytes { lookupID in
            serviceTag.withUnsafeBytes { serviceTag in nonce.withUnsafeBytes { recordManifestTerm(lookupID, serviceTag, $0, .removed) } }
        }
        manifestCheck.verified.record(lookupID: lookupID, row: nil)
    }

    /// Records that a row this process sealed entered the vault (its fields have the right lengths).
    func recordManifestAddition(_ item: SealedItem) {
        item.lookupID.withUnsafeBytes { lookupID in
            item.serviceTag.withUnsafeBytes { serviceTag in item.nonce.withUnsafeBytes { recordManifestTerm(lookupID, serviceTag, $0, .added) } }
        }
        if manifestCheck.verified.bucket(Manifest.bucket(of: item.lookupID)) != nil {
            manifestCheck.verified.record(lookupID: item.lookupID, row: item.row)
        }
    }

    private func recordManifestTerm(_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ change: ManifestChanges.RowChange) {
        manifestChanges.record(bucket: Manifest.bucket(of: lookupID), term: keys.manifestItemTerm(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce), change)
    }

    /// Applies the recorded changes to the stored buckets and root; call last in the
    /// write transaction. Refuses to build on a root whose tag does not verify.
    func applyManifestChanges() throws(VaultError) {
        defer { manifestChanges.removeAll() }
        guard !manifestChanges.isEmpty else { return }
        // The header as stored now, not as this handle last saw it: another process may
        // have changed the passphrase, and the tag covers the header.
        var (root, header, generation) = try verifiedStoredRoot()
        let rootBefore = root
        for bucket in manifestChanges.touched {
            let delta = manifestChanges.delta(bucket)
            if delta.isZero { continue }
            let old = try storedDigest(bucket: bucket)
            let new = old + delta
            if !old.isZero { root -= manifestCheck.bucketTerm(bucket, digest: old, keys: keys) }
            if !new.isZero { root += manifestCheck.bucketTerm(bucket, digest: new, keys: keys) }
            try store.setManifestDigest(bucket: bucket, new)
            manifestCheck.verified.record(bucket: bucket, digest: new)
            manifestCheck.recordProven(bucket: bucket, digest: new)
        }
        manifestCheck.recordProven(rootBefore: rootBefore, after: root)
        generation += 1
        let tag = keys.manifestRootTag(root, header: header, generation: generation)
        try store.writeManifestRoot(root, tag: tag, generation: generation)
        manifestCheck.committing = (generation, root)
        manifestCheck.verified.record(root: .init(root: root, header: header, generation: generation, tag: tag))
    }

    /// Re-tags the stored root for a header this transaction is writing (passphrase change),
    /// one generation on: the root is verified under the header stored before.
    func retagManifestRoot(for newHeader: VaultHeader) throws(VaultError) {
        let (root, _, generation) = try verifiedStoredRoot()
        try store.writeManifestRoot(root, tag: keys.manifestRootTag(root, header: newHeader, generation: generation + 1), generation: generation + 1)
        manifestCheck.committing = (generation + 1, root)
        manifestCheck.verified.rootRewrittenInTransaction()
    }

    /// Recomputes the whole manifest from the rows under `keys`, tagged with `header` at
    /// `generation` (re-key, format upgrade).
    @discardableResult
    static func rebuildManifest(store: VaultStore, keys: KeyHierarchy, header: VaultHeader, generation: UInt64) throws(VaultError) -> ManifestDigest {
        let digests = try computeDigests(store: store, keys: keys, bucket: nil)
        try store.deleteAllManifestBuckets()
        var root = ManifestDigest.zero
        for (bucket, digest) in digests.enumerated() where !digest.isZero {
            root += keys.manifestBucketTerm(bucket: bucket, digest: digest)
            try store.setManifestDigest(bucket: bucket, digest)
        }
        try store.writeManifestRoot(root, tag: keys.manifestRootTag(root, header: header, generation: generation), generation: generation)
        return root
    }
}
