/// What this process has verified of the manifest, valid for the snapshot version
/// `dataVersion` (see ``VaultStorage/snapshotVersion``). This connection's own writes
/// keep what it verified true, because they update the manifest together with the
/// rows, so after its own commit the check moves on to the new version; a commit by
/// any other connection makes it verify the root again. On a storage that tells which
/// bucket rows changed (PostgreSQL), that reads only those (``ProvenManifest``), and the
/// buckets verified before stay verified for lone reads when the storage still vouches
/// for their rows (``VaultStorage/carryVerifiedBuckets(unchanged:changed:)``): all of a
/// bucket whose digest the new root shows unchanged, and in a bucket another writer
/// changed, the rows whose versions are the ones verified.
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

    /// Whether `bucket` (`nil`: every bucket) was verified under this version by reading its rows.
    func covers(bucket: Int?) -> Bool {
        guard rootVerified else { return false }
        guard let bucket else { return allBucketsVerified }
        return allBucketsVerified || verifiedBuckets[bucket]
    }

    /// Whether a lone read of a row of `bucket` may be trusted when the storage reports this
    /// version after it: the bucket was verified, or carried (its rows' versions are
    /// compared by that read; a read inside a transaction compares none, so it needs
    /// ``covers(bucket:)``).
    func coversLoneRead(bucket: Int) -> Bool {
        covers(bucket: bucket) || (rootVerified && carriedBuckets[bucket])
    }

    // MARK: Carrying what was verified across another process's commit

    /// Every bucket's digest as last proven against the root (``ProvenManifest``).
    var proven: ProvenManifest?
    /// Buckets whose rows the storage vouches for, after another process's commit left
    /// their digests unchanged: lone reads only.
    private(set) var carriedBuckets = [Bool](repeating: false, count: Manifest.bucketCount)
    /// The buckets verified before the version last moved, and the digests they were
    /// verified at; some are carried once the root is verified again.
    private var candidates: (buckets: [Int], digests: [ManifestDigest])?

    /// After the root was verified again (``proven`` now holds its digests): the buckets
    /// verified before, split by whether their digests changed, which the storage may
    /// carry (a changed one for the rows it still holds at the versions verified).
    func bucketsToCarry() -> (unchanged: [Int], changed: [Int]) {
        defer { candidates = nil }
        guard let candidates, let proven else { return ([], []) }
        var split: (unchanged: [Int], changed: [Int]) = ([], [])
        for bucket in candidates.buckets {
            if candidates.digests[bucket] == proven.digests[bucket] { split.unchanged.append(bucket) } else { split.changed.append(bucket) }
        }
        return split
    }

    func carried(_ buckets: [Int]) {
        for bucket in buckets { carriedBuckets[bucket] = true }
    }

    /// The new digests and root of the write transaction in progress, applied to
    /// ``proven`` once it commits.
    private var provenChanges: [(bucket: Int, digest: ManifestDigest)] = []
    private var provenRootChange: (before: ManifestDigest, after: ManifestDigest)?

    func recordProven(bucket: Int, digest: ManifestDigest) {
        provenChanges.append((bucket, digest))
    }

    func recordProven(rootBefore: ManifestDigest, after: ManifestDigest) {
        provenRootChange = (rootBefore, after)
    }

    /// The transaction committed: ``proven`` moves on with it if it was proven for the
    /// root the transaction built on (then it was exactly the digests stored then), and
    /// is listed from `mark` next (``VaultStorage/manifestMarkOfLastCommit``) when the
    /// storage names the state the commit made.
    func applyProvenChanges(mark: Int64?) {
        defer { discardProvenChanges() }
        guard let change = provenRootChange else { return }
        guard var kept = proven, kept.root == change.before else {
            proven = nil
            return
        }
        for (bucket, digest) in provenChanges { kept.digests[bucket] = digest }
        kept.root = change.after
        if let mark { kept.mark = mark }
        proven = kept
    }

    func discardProvenChanges() {
        provenChanges.removeAll()
        provenRootChange = nil
    }

    /// The rows and root behind what was verified, kept to prepare `set`s from.
    let verified = VerifiedBuckets()

    /// Forgets that `bucket` was verified (the others stay): the next use verifies it from
    /// its rows again (``UnlockedVault/verifyAgain(buckets:)`` says when).
    func forget(bucket: Int) {
        if allBucketsVerified {
            allBucketsVerified = false
            for index in verifiedBuckets.indices { verifiedBuckets[index] = true }
        }
        verifiedBuckets[bucket] = false
        carriedBuckets[bucket] = false
    }

    /// Forgets what reads may rely on: another connection committed, so the next read
    /// verifies again. The rows kept for prepared sets stay (``VerifiedBuckets`` says why
    /// another commit cannot make a prepared set write a wrong state), and so do the
    /// proven digests and which buckets were verified at them (candidates to carry once
    /// the root is verified again; kept from an earlier reset if none was verified since).
    func reset(dataVersion: Int64 = -1) {
        if rootVerified, let proven {
            // Read from local copies: every access to this class's arrays in a loop of
            // every bucket is checked for exclusivity (run on every other process's commit).
            let (verified, carried) = (verifiedBuckets, carriedBuckets)
            let buckets = allBucketsVerified ? Array(0..<Manifest.bucketCount) : verified.indices.filter { verified[$0] || carried[$0] }
            candidates = buckets.isEmpty ? nil : (buckets, proven.digests)
        } else if rootVerified {
            candidates = nil
        }
        self.dataVersion = dataVersion
        rootVerified = false
        allBucketsVerified = false
        verifiedBuckets = Self.noBuckets
        carriedBuckets = Self.noBuckets
    }

    private static let noBuckets = [Bool](repeating: false, count: Manifest.bucketCount)

    /// Forgets everything verified, the kept rows and proven digests too: they are known
    /// to be out of date (a prepared set found the vault changed; the proven digests and
    /// the buckets verified at them stay then, since the next check of the root sums them
    /// with what changed), the keys changed, a verification failed, or ``Vault/verify()``
    /// starts from nothing.
    func resetAll(dataVersion: Int64 = -1, keepingProven: Bool = false) {
        reset(dataVersion: dataVersion)
        if !keepingProven {
            candidates = nil
            proven = nil
        }
        discardProvenChanges()
        verified.removeAll()
    }
}
