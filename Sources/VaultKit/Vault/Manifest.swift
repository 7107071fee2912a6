#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vault-wide manifest: how a deleted row, or an older copy of a row put back, is
/// detected (docs/FORMAT.md "Manifest", docs/THREAT-MODEL.md).
///
/// Rows fall into 1,024 buckets by the first 10 bits of their lookup id (random-looking,
/// so buckets fill evenly). A bucket's digest is the sum (mod 2^256) of its rows' terms;
/// the root, kept in the header with a tag over the header too, is the sum of the
/// non-empty buckets' terms (see `ManifestHash.swift`). Every write changes the digests of the buckets it touched and
/// the root in its own transaction: O(1) per write, whatever the vault's size.
///
/// Why buckets, not one digest over all rows: a read must be checked without reading
/// the whole vault. A process verifies the root (one row per non-empty bucket, at most
/// 1,024) and then only the bucket of the item it reads (about n/1,024 rows), once;
/// both stay verified until another connection commits (the connection's snapshot
/// version, `SQLITE_FCNTL_DATA_VERSION`, read after the row's own statement), so a
/// steady stream of reads costs one file control each. Opening stays O(1).
enum Manifest {
    static let bucketBits = 10
    static let bucketCount = 1 << bucketBits

    /// The bucket of a 32-byte lookup id: its first 10 bits.
    static func bucket(of lookupID: UnsafeRawBufferPointer) -> Int {
        (Int(lookupID[0]) << 2) | (Int(lookupID[1]) >> 6)
    }

    /// Whether a row's identifying columns have the lengths FORMAT.md gives them.
    static func isRowIdentity(_ lookupIDCount: Int, _ serviceTagCount: Int, _ nonceCount: Int) -> Bool {
        lookupIDCount == 32 && serviceTagCount == 32 && nonceCount == SecretBox.nonceByteCount
    }

    static let badRow = VaultError.corrupted(reason: .invalidItemRowFieldLength)

    static func bucket(of lookupID: [UInt8]) -> Int {
        lookupID.withUnsafeBytes { bucket(of: $0) }
    }

    /// The lookup ids of `bucket` are those in `lower ..< upper` (`upper` is `nil` for
    /// the last bucket), compared as SQLite compares blobs (memcmp, then length).
    static func bounds(of bucket: Int) -> (lower: [UInt8], upper: [UInt8]?) {
        func prefix(_ bucket: Int) -> [UInt8] { [UInt8(bucket >> 2), UInt8((bucket & 3) << 6)] }
        return (prefix(bucket), bucket + 1 < bucketCount ? prefix(bucket + 1) : nil)
    }
}

/// The manifest changes of the write transaction in progress: per bucket, the sum of
/// the terms of rows added minus those of rows removed. Applied once, just before the commit, so a
/// batch of 100,000 writes updates each bucket and the root once.
///
/// A class so the ``UnlockedVault`` copy inside a ``VaultBatch`` records into the same
/// transaction; it is only ever used under the ``Vault``'s mutex.
final class ManifestChanges {
    enum RowChange { case added, removed }

    /// Per bucket, the delta; flat arrays rather than a dictionary, because a bulk
    /// import toggles once per item.
    private var deltas = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
    private var isTouched = [Bool](repeating: false, count: Manifest.bucketCount)
    /// The buckets with a delta, in first-touched order.
    private(set) var touched: [Int] = []

    var isEmpty: Bool { touched.isEmpty }

    func delta(_ bucket: Int) -> ManifestDigest { deltas[bucket] }

    func record(bucket: Int, term: ManifestDigest, _ change: ManifestChanges.RowChange) {
        if !isTouched[bucket] {
            isTouched[bucket] = true
            touched.append(bucket)
        }
        switch change {
        case .added: deltas[bucket] += term
        case .removed: deltas[bucket] -= term
        }
    }

    func removeAll() {
        for bucket in touched {
            deltas[bucket] = .zero
            isTouched[bucket] = false
        }
        touched.removeAll(keepingCapacity: true)
    }
}

/// What this process has verified of the manifest, valid for the snapshot version
/// `dataVersion` (see ``VaultStorage/snapshotVersion``). This connection's own writes
/// keep what it verified true, because they update the manifest together with the
/// rows, so after its own commit the check moves on to the new version; a commit by
/// any other connection makes it start over.
///
/// A class for the same reason as ``ManifestChanges``: a write inside a batch verifies
/// the bucket it is about to change.
final class ManifestCheck {
    private(set) var dataVersion: Int64 = -1
    var rootVerified = false
    var allBucketsVerified = false
    var verifiedBuckets = [Bool](repeating: false, count: Manifest.bucketCount)
    /// Set for the length of a write transaction: no other connection can commit while
    /// it holds the write lock, so the version is checked once, not once per write.
    var holdsWriteLock = false
    /// The generation and root the write transaction in progress is about to commit,
    /// for the rollback guard to record once it has.
    var committing: (generation: UInt64, root: ManifestDigest)?
    /// A state committed by another process that this call verified outside a write
    /// transaction, for the rollback guard to compare once the call's transactions have
    /// ended (``UnlockedVault/checkPendingRollbackGuard()``).
    var guardPending: RollbackGuardFile.State?

    /// After this connection's own commit, from a version this check was valid for.
    func ownCommit(from before: Int64, to after: Int64) {
        if dataVersion == before { dataVersion = after } else { reset(dataVersion: after) }
    }

    /// A memo of `manifestBucketTerm(bucket, digest)` under the current keys: checking
    /// the root again after another process's write re-hashes only the buckets whose
    /// digest changed. A cache of a pure function, not of a verdict; cleared with the keys.
    private var termDigests = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
    private var terms = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)

    func bucketTerm(_ bucket: Int, digest: ManifestDigest, keys: KeyHierarchy) -> ManifestDigest {
        if termDigests[bucket] == digest, !digest.isZero { return terms[bucket] }
        let term = keys.manifestBucketTerm(bucket: bucket, digest: digest)
        termDigests[bucket] = digest
        terms[bucket] = term
        return term
    }

    /// Forgets the memo of bucket terms: the manifest key changed.
    func keysChanged() {
        resetAll()
        for index in termDigests.indices { termDigests[index] = .zero }
    }

    func covers(bucket: Int?) -> Bool {
        guard rootVerified else { return false }
        guard let bucket else { return allBucketsVerified }
        return allBucketsVerified || verifiedBuckets[bucket]
    }

    /// The rows and root behind what was verified, kept to prepare `set`s from.
    let verified = VerifiedBuckets()

    /// Forgets what reads may rely on: another connection committed, so the next read
    /// verifies again. The rows kept for prepared sets stay (``VerifiedBuckets`` says why
    /// another commit cannot make a prepared set write a wrong state).
    func reset(dataVersion: Int64 = -1) {
        self.dataVersion = dataVersion
        rootVerified = false
        allBucketsVerified = false
        for index in verifiedBuckets.indices { verifiedBuckets[index] = false }
    }

    /// Forgets everything verified, the kept rows too: they are known to be out of date
    /// (a prepared set found the vault changed), the keys changed, a verification failed,
    /// or ``Vault/verify()`` starts from nothing.
    func resetAll(dataVersion: Int64 = -1) {
        reset(dataVersion: dataVersion)
        verified.removeAll()
    }
}

extension UnlockedVault {
    // MARK: Recording writes (inside a write transaction)

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
        for bucket in manifestChanges.touched {
            let delta = manifestChanges.delta(bucket)
            if delta.isZero { continue }
            let old = try storedDigest(bucket: bucket)
            let new = old + delta
            if !old.isZero { root -= manifestCheck.bucketTerm(bucket, digest: old, keys: keys) }
            if !new.isZero { root += manifestCheck.bucketTerm(bucket, digest: new, keys: keys) }
            try store.setManifestDigest(bucket: bucket, new)
            manifestCheck.verified.record(bucket: bucket, digest: new)
        }
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

    // MARK: Verifying reads

    /// Makes sure the manifest proves the rows a call is about to see or change: the
    /// bucket of one row, or (`bucket == nil`) every row. When that was verified and no
    /// other connection committed since, it costs one one-row read (nothing inside a
    /// write transaction, which checked once when it took the lock).
    ///
    /// Inside a write transaction it checks that transaction's snapshot, and allows for
    /// the changes this transaction has recorded but not yet applied.
    ///
    /// - Parameter force: verify again even if verified (``Vault/verify()``).
    /// - Throws: ``VaultError/tampered(reason:)`` when a row was deleted, rolled back
    ///   or added behind VaultKit's back, or the manifest itself was altered; also when
    ///   another process re-keyed the vault (see ``verifyManifestFollowingRekey(bucket:force:)``).
    func ensureManifestVerified(bucket: Int?, force: Bool = false) throws(VaultError) {
        do {
            try verifyManifest(bucket: bucket, force: force)
        } catch where error.code == .tampered {
            // Nothing kept is relied on past a failed check, not even by a prepared set.
            manifestCheck.verified.removeAll()
            throw error
        }
    }

    private func verifyManifest(bucket: Int?, force: Bool) throws(VaultError) {
        // Everything below is checked in one snapshot (a write transaction's, if in one).
        try store.readTransaction { () throws(VaultError) in
            if force || !manifestCheck.holdsWriteLock {
                try store.pinSnapshot()
                let version = store.snapshotVersion
                if force {
                    manifestCheck.resetAll(dataVersion: version)
                } else if version != manifestCheck.dataVersion {
                    manifestCheck.reset(dataVersion: version)
                }
            }
            if manifestCheck.covers(bucket: bucket) { return }
            // One bucket, on a storage that commits prepared sets: its rows are kept.
            var kept: VerifiedBuckets.Bucket?
            // (A bucket already kept is read again whatever the room: the rows replace its own.)
            if let bucket, store.commitsPreparedSets, manifestCheck.verified.hasRoom || manifestCheck.verified.bucket(bucket) != nil {
                kept = try Self.computeDigest(store: store, keys: keys, bucket: bucket)
            }
            let computed = if let kept { [kept.digest] } else { try Self.computeDigests(store: store, keys: keys, bucket: bucket) }
            let pending = manifestChanges
            if let bucket, manifestCheck.rootVerified {
                // The root was verified in this same data version: one bucket row will do.
                let expected = try storedDigest(bucket: bucket) + pending.delta(bucket)
                guard computed[0] == expected else { throw Self.rowsChanged }
            } else {
                let (stored, state) = try verifiedStoredBuckets()
                try noteVerifiedState(state)
                manifestCheck.rootVerified = true
                let buckets = bucket.map { [$0] } ?? Array(0..<Manifest.bucketCount)
                for (index, bucket) in buckets.enumerated() where computed[index] != stored[bucket] + pending.delta(bucket) {
                    throw Self.rowsChanged
                }
            }
            if let bucket { manifestCheck.verifiedBuckets[bucket] = true } else { manifestCheck.allBucketsVerified = true }
            if let bucket, let kept { manifestCheck.verified.keep(bucket, kept) }
        }
    }

    /// ``ensureManifestVerified(bucket:force:)`` for calls outside a write transaction:
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

    /// The stored digest of every bucket (zero where none), checked against the root.
    private func verifiedStoredBuckets() throws(VaultError) -> ([ManifestDigest], (generation: UInt64, root: ManifestDigest)) {
        let (root, header, generation) = try verifiedStoredRoot()
        var digests = [ManifestDigest](repeating: .zero, count: Manifest.bucketCount)
        var computedRoot = ManifestDigest.zero
        try store.forEachManifestBucket { (bucket, bytes) throws(VaultError) in
            guard (0..<Int64(Manifest.bucketCount)).contains(bucket), let digest = ManifestDigest(bytes: bytes), !digest.isZero else {
                throw .tampered(reason: .invalidManifestBucket)
            }
            digests[Int(bucket)] = digest
            computedRoot += manifestCheck.bucketTerm(Int(bucket), digest: digest, keys: keys)
        }
        guard computedRoot == root else { throw .tampered(reason: .manifestBucketsMismatch) }
        if store.commitsPreparedSets {
            let tag = keys.manifestRootTag(root, header: header, generation: generation)
            manifestCheck.verified.root = .init(root: root, header: header, generation: generation, tag: tag)
        }
        return (digests, (generation, root))
    }

    /// The header's manifest root, after checking its tag over the header and generation
    /// as stored now; also that header and generation.
    private func verifiedStoredRoot() throws(VaultError) -> (root: ManifestDigest, header: VaultHeader, generation: UInt64) {
        let header = try store.readHeader()
        guard header.formatVersion == VaultHeader.currentFormatVersion else {
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

    private func storedDigest(bucket: Int) throws(VaultError) -> ManifestDigest {
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
}

/// The checks every row of a scan in lookup id order passes before its manifest term
/// counts: its identifying columns have their lengths, and its lookup id is greater than
/// the one before. A lookup id seen twice (a table rebuilt without its primary key, or
/// pages edited by hand) shows as one not greater, and is refused: the sum would count
/// both, but a read by key finds one.
struct OrderedRowScan {
    private var previous = [UInt8](repeating: 0, count: 32)
    private var isFirst = true

    /// The row's manifest term, once it passed the checks.
    mutating func term(
        _ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, keys: KeyHierarchy
    ) throws(VaultError) -> ManifestDigest {
        if let failure = admit(lookupID, serviceTagCount: serviceTag.count, nonceCount: nonce.count) { throw failure }
        return keys.manifestItemTerm(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce)
    }

    /// The same for a row read whole.
    mutating func term(of row: StoredRow, keys: KeyHierarchy) throws(VaultError) -> ManifestDigest {
        let failure = row.lookupID.withUnsafeBytes { admit($0, serviceTagCount: row.serviceTag.count, nonceCount: row.nonce.count) }
        if let failure { throw failure }
        return Self.term(of: row, keys: keys)
    }

    /// A row's manifest term, unchecked (a row this process sealed or already checked).
    static func term(of row: StoredRow, keys: KeyHierarchy) -> ManifestDigest {
        row.lookupID.withUnsafeBytes { lookupID in
            row.serviceTag.withUnsafeBytes { serviceTag in
                row.nonce.withUnsafeBytes { keys.manifestItemTerm(lookupID: lookupID, serviceTag: serviceTag, nonce: $0) }
            }
        }
    }

    private mutating func admit(_ lookupID: UnsafeRawBufferPointer, serviceTagCount: Int, nonceCount: Int) -> VaultError? {
        guard Manifest.isRowIdentity(lookupID.count, serviceTagCount, nonceCount) else { return Manifest.badRow }
        let ascending = previous.withUnsafeBytes { memcmp($0.baseAddress!, lookupID.baseAddress!, 32) < 0 }
        guard isFirst || ascending else { return .tampered(reason: .rowStoredTwice) }
        isFirst = false
        previous.withUnsafeMutableBytes { $0.copyMemory(from: lookupID) }
        return nil
    }
}
