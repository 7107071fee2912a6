/// Verifying the manifest: that the rows a call sees or changes are exactly those the
/// stored buckets and the tagged root account for.
extension UnlockedVault {
    /// Makes sure the manifest proves the rows a call is about to see or change: the
    /// bucket of one row, or (`bucket == nil`) every row. When that was verified and no
    /// other connection committed since, it costs one one-row read (nothing inside a
    /// write transaction, which checked once when it took the lock).
    ///
    /// Inside a write transaction it checks that transaction's snapshot, and allows for
    /// the changes this transaction has recorded but not yet applied.
    ///
    /// - Parameters:
    ///   - force: verify again even if verified (``Vault/verify()``).
    ///   - carriedSuffices: the caller reads one row of `bucket` and lets the storage
    ///     confirm it (``VaultStorage/prefetchItem(lookupID:)``): the root is checked
    ///     first, and when it leaves `bucket` carried, its rows are not read.
    /// - Throws: ``VaultError/tampered(reason:)`` when a row was deleted, rolled back
    ///   or added behind VaultKit's back, or the manifest itself was altered; also when
    ///   another process re-keyed the vault (see ``verifyManifestFollowingRekey(bucket:force:)``).
    func ensureManifestVerified(bucket: Int?, force: Bool = false, carriedSuffices: Bool = false) throws(VaultError) {
        do {
            try verifyManifest(bucket: bucket, force: force, carriedSuffices: carriedSuffices)
        } catch where error.code == .tampered {
            // Nothing kept is relied on past a failed check, not even by a prepared set.
            manifestCheck.resetAll(dataVersion: manifestCheck.dataVersion)
            throw error
        }
    }

    private func verifyManifest(bucket: Int?, force: Bool, carriedSuffices: Bool) throws(VaultError) {
        // Everything below is checked in one snapshot (a write transaction's, if in one).
        try store.readTransaction { () throws(VaultError) in
            if force || !manifestCheck.holdsWriteLock {
                // What a moved root is checked from, sent with the snapshot's first statement.
                if !force, let proven = manifestCheck.proven {
                    try store.prefetchManifestBuckets(changedSince: proven.mark, including: bucket)
                }
                try store.pinSnapshot()
                let version = store.snapshotVersion
                if force {
                    manifestCheck.resetAll(dataVersion: version)
                } else if version != manifestCheck.dataVersion {
                    manifestCheck.reset(dataVersion: version)
                }
            } else if store.snapshotVersion != manifestCheck.dataVersion {
                // A row read under the lock was not the one verified (a storage whose
                // version misses a commit of rows alone says so as it meets the row):
                // its bucket is verified again, in this transaction's snapshot.
                manifestCheck.reset(dataVersion: store.snapshotVersion)
            }
            if manifestCheck.covers(bucket: bucket) { return }
            // A read of one row, on a storage that lists what changed: the root first. A
            // bucket whose digest it shows unchanged is carried, and its row is then
            // confirmed by the storage against the row versions it holds, as a lone read's
            // is; a bucket that is not is read whole below, in this snapshot.
            var storedBefore: [ManifestDigest]?
            if carriedSuffices, let bucket, !manifestCheck.rootVerified, manifestCheck.proven != nil {
                storedBefore = try verifyRootAndCarry(including: bucket)
                if manifestCheck.coversLoneRead(bucket: bucket) { return }
            }
            // One bucket, on a storage that commits prepared sets: its rows are kept.
            var kept: VerifiedBuckets.Bucket?
            // (A bucket already kept is read again whatever the room: the rows replace its own.)
            if let bucket, store.commitsPreparedSets, manifestCheck.verified.hasRoom || manifestCheck.verified.bucket(bucket) != nil {
                kept = try Self.computeDigest(store: store, keys: keys, bucket: bucket)
            }
            let computed = if let kept { [kept.digest] } else { try Self.computeDigests(store: store, keys: keys, bucket: bucket) }
            let pending = manifestChanges
            var stored: ManifestDigest?
            if let bucket, let storedBefore {
                stored = storedBefore[bucket]
            } else if let bucket, manifestCheck.rootVerified {
                // The root was verified in this same data version: one bucket row will do,
                // if it says what the proven digests do (else the root is checked again).
                let digest = try storedDigest(bucket: bucket)
                if manifestCheck.proven.map({ $0.digests[bucket] == digest }) ?? true { stored = digest }
            }
            if let bucket, let stored {
                guard computed[0] == stored + pending.delta(bucket) else { throw Self.rowsChanged }
            } else {
                // With the incremental check, `bucket`'s stored row is among those it reads.
                let stored = try verifyRootAndCarry(including: bucket)
                let buckets = bucket.map { [$0] } ?? Array(0..<Manifest.bucketCount)
                for (index, bucket) in buckets.enumerated() where computed[index] != stored[bucket] + pending.delta(bucket) {
                    throw Self.rowsChanged
                }
            }
            if let bucket { manifestCheck.verifiedBuckets[bucket] = true } else { manifestCheck.allBucketsVerified = true }
            if let bucket, let kept { manifestCheck.verified.keep(bucket, kept) }
        }
    }

    /// Verifies the stored root in this snapshot (with `bucket`'s stored digest among
    /// those read) and returns every bucket's digest; buckets verified before stay
    /// verified for lone reads where the storage still vouches for their rows (in a
    /// bucket another writer changed, for the rows still at the versions verified).
    private func verifyRootAndCarry(including bucket: Int?) throws(VaultError) -> [ManifestDigest] {
        let (stored, state) = try verifiedStoredBuckets(including: bucket)
        try noteVerifiedState(state)
        manifestCheck.rootVerified = true
        let (unchanged, changed) = manifestCheck.bucketsToCarry()
        manifestCheck.carried(store.carryVerifiedBuckets(unchanged: unchanged, changed: changed))
        return stored
    }

    /// ``ensureManifestVerified(bucket:force:carriedSuffices:)`` for calls outside a write transaction:
    /// a re-key by another process changes the manifest key, so a failure is first
    /// taken as a sign of one, followed, and the check made again.
    mutating func verifyManifestFollowingRekey(bucket: Int?, force: Bool = false) throws(VaultError) {
        do {
            try ensureManifestVerified(bucket: bucket, force: force)
        } catch let error where error.code == .tampered {
            guard try refreshKeysIfRekeyed() else { throw error }
            try ensureManifestVerified(bucket: bucket, force: force)
        }
    }

    private static let rowsChanged = VaultError.tampered(reason: .rowsChanged)

    /// The digest of every bucket (zero where none), checked against the root: the proven
    /// digests with the bucket rows written since (and `bucket`'s, whatever its age) put
    /// in their place when the storage lists those and they sum to the root
    /// (``ProvenManifest``), else every stored digest.
    private func verifiedStoredBuckets(including bucket: Int?) throws(VaultError) -> ([ManifestDigest], (generation: UInt64, root: ManifestDigest)) {
        let (root, header, generation) = try verifiedStoredRoot()
        let digests: [ManifestDigest]
        if let proven = try provenFromChanges(to: root, including: bucket) {
            digests = proven.digests
            manifestCheck.proven = proven
        } else {
            var all = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
            var computedRoot = ManifestDigest.zero
            // Read before the rows, so the mark names no later state than they describe.
            let mark = store.manifestMark
            try store.forEachManifestBucket { (bucket, bytes) throws(VaultError) in
                let (bucket, digest) = try Self.validBucket(bucket, bytes)
                all[bucket] = digest
                computedRoot += manifestCheck.bucketTerm(bucket, digest: digest, keys: keys)
            }
            guard computedRoot == root else { throw .tampered(reason: .manifestBucketsMismatch) }
            digests = all
            manifestCheck.proven = mark.map { ProvenManifest(digests: all, root: root, mark: $0) }
        }
        if store.commitsPreparedSets {
            let tag = keys.manifestRootTag(root, header: header, generation: generation)
            manifestCheck.verified.root = .init(root: root, header: header, generation: generation, tag: tag)
        }
        return (digests, (generation, root))
    }

    /// The proven digests moved on to `root` by the bucket rows written since their mark
    /// (and `bucket`'s, so that the one a caller verifies is the stored one), or `nil` when
    /// the storage cannot list those or they do not sum to `root` (then every bucket is
    /// read: a change the list missed can only cause this, never a pass).
    func provenFromChanges(to root: ManifestDigest, including bucket: Int?) throws(VaultError) -> ProvenManifest? {
        guard var proven = manifestCheck.proven, let mark = store.manifestMark else { return nil }
        guard let listed = try store.manifestBuckets(changedSince: proven.mark, including: bucket) else { return nil }
        var changed: [(Int, ManifestDigest)] = []
        for (listedBucket, bytes) in listed {
            guard let bytes else {
                // Listed as now empty. A bucket number no vault has is a bad hint, not a
                // stored digest: every bucket is read instead.
                guard (0..<Int64(Manifest.bucketCount)).contains(listedBucket) else { return nil }
                changed.append((Int(listedBucket), .zero))
                continue
            }
            let valid = bytes.withUnsafeBytes { bytes in Result { () throws(VaultError) in try Self.validBucket(listedBucket, bytes) } }
            changed.append(try valid.get())
        }
        // `bucket` not listed: it has no stored row (an empty bucket, or one deleted).
        if let bucket, !changed.contains(where: { $0.0 == bucket }) { changed.append((bucket, .zero)) }
        for (bucket, digest) in changed {
            let old = proven.digests[bucket]
            if old == digest { continue }
            if !old.isZero { proven.root -= manifestCheck.bucketTerm(bucket, digest: old, keys: keys) }
            if !digest.isZero { proven.root += manifestCheck.bucketTerm(bucket, digest: digest, keys: keys) }
            proven.digests[bucket] = digest
        }
        guard proven.root == root else { return nil }
        proven.mark = mark
        return proven
    }

    /// A stored bucket row's number and digest, as FORMAT.md section 6 allows them.
    private static func validBucket(_ bucket: Int64, _ bytes: UnsafeRawBufferPointer) throws(VaultError) -> (Int, ManifestDigest) {
        guard (0..<Int64(Manifest.bucketCount)).contains(bucket), let digest = ManifestDigest(bytes: bytes), !digest.isZero else {
            throw .tampered(reason: .invalidManifestBucket)
        }
        return (Int(bucket), digest)
    }

    /// The header's manifest root, after checking its tag over the header and generation
    /// as stored now; also that header and generation.
    func verifiedStoredRoot() throws(VaultError) -> (root: ManifestDigest, header: VaultHeader, generation: UInt64) {
        let header = try store.readHeader()
        // A format-3 vault read as it is (read-only) may meet the upgrade another process made.
        guard header.formatVersion == VaultHeader.currentFormatVersion || header.formatVersion == self.header.formatVersion else {
            throw .tampered(reason: .formatVersionChangedWhileOpen)
        }
        let (rootBytes, tagBytes) = try store.readManifestRoot()
        guard let rootBytes, let tagBytes else { throw .tampered(reason: .manifestRootMissing) }
        let root = rootBytes.withUnsafeBytes { ManifestDigest(bytes: $0) }
        guard let root, tagBytes.count == 32 else { throw .tampered(reason: .invalidManifestRoot) }
        let generation = try store.readGeneration()
        let valid = keys.manifestRootTag(root, header: header, generation: generation).withLittleEndianBytes { expected in
            tagBytes.withUnsafeBytes { Sodium.constantTimeEqual(expected, $0) }
        }
        guard valid else { throw .tampered(reason: .headerFailedAuthentication) }
        return (root, header, generation)
    }

    func storedDigest(bucket: Int) throws(VaultError) -> ManifestDigest {
        guard let bytes = try store.manifestDigest(bucket: bucket) else { return .zero }
        guard let digest = bytes.withUnsafeBytes({ ManifestDigest(bytes: $0) }) else {
            throw .tampered(reason: .invalidManifestBucket)
        }
        return digest
    }

    /// ``computeDigests(store:keys:bucket:combine:)`` for one bucket, read whole: its digest,
    /// and its rows by lookup id (what ``VerifiedBuckets`` keeps).
    static func computeDigest(store: VaultStore, keys: KeyHierarchy, bucket: Int) throws(VaultError) -> VerifiedBuckets.Bucket {
        var scan = OrderedRowScan()
        var kept = VerifiedBuckets.Bucket(digest: .zero, rows: [:])
        try store.forEachRow(in: Manifest.bounds(of: bucket)) { (row) throws(VaultError) in
            kept.digest += try scan.term(of: row, keys: keys)
            kept.rows[row.lookupID] = row
        }
        return kept
    }

    /// The digests computed from the rows: of one bucket (one element), or of all
    /// buckets (`bucket == nil`, one scan in lookup id order).
    ///
    /// The scan is in lookup id order, each row checked by ``OrderedRowScan`` (a lookup id
    /// stored twice is refused).
    static func computeDigests(
        store: VaultStore, keys: KeyHierarchy, bucket: Int?,
        combine: (inout ManifestDigest, ManifestDigest) -> Void = { $0 += $1 }
    ) throws(VaultError) -> [ManifestDigest] {
        let bounds = bucket.map { Manifest.bounds(of: $0) }
        var digests = [ManifestDigest](repeating: .zero, count: bucket == nil ? Manifest.bucketCount : 1)
        var scan = OrderedRowScan()
        try store.forEachRowIdentity(in: bounds) { (lookupID, serviceTag, nonce) throws(VaultError) in
            let term = try scan.term(lookupID, serviceTag, nonce, keys: keys)
            combine(&digests[bucket == nil ? Manifest.bucket(of: lookupID) : 0], term)
        }
        return digests
    }

    /// The stored header and generation, read under the same check as the root: what a
    /// re-key builds its header on and continues the generation from.
    func verifiedHeaderAndGeneration() throws(VaultError) -> (header: VaultHeader, generation: UInt64) {
        let (_, header, generation) = try verifiedStoredRoot()
        return (header, generation)
    }

    /// The stored root and generation, and the vault id, verified: what a rollback guard compares.
    func verifiedState() throws(VaultError) -> (vaultID: [UInt8], generation: UInt64, root: ManifestDigest) {
        let (root, header, generation) = try store.readTransaction { () throws(VaultError) in try verifiedStoredRoot() }
        return (header.vaultID, generation, root)
    }
}
