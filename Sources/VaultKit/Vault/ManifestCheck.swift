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
