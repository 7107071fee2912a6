/// Every bucket's digest as last proven against the tagged root (their keyed sum is that
/// root), and the storage's mark for the state they were read in: what lets a root that
/// moved be checked from the bucket rows written since the mark, instead of all 1,024
/// (``VaultStorage/manifestBuckets(changedSince:including:)``, docs/FORMAT.md section 13.1).
///
/// Why a list of changed rows that misses one can only cost a full read, never pass a
/// wrong state: the new root is tagged, so only a holder of the key wrote it, as the sum
/// of the digests it committed. The digests here with the listed ones put in their place
/// sum to it only if they are those digests: a digest left out, or one the storage made
/// up, would need the keyed terms of different buckets and digests to cancel, which
/// without the key is as hard as forging the sum itself. So on a match the digests here
/// are the committed ones, whatever the stored rows say (a stored digest that differs is
/// caught when its bucket is verified: ``UnlockedVault/ensureManifestVerified(bucket:force:carriedSuffices:)``
/// compares the two); on a mismatch the engine reads every bucket, as before.
struct ProvenManifest {
    var digests: [ManifestDigest]
    /// Their keyed sum: the tagged root they were proven against.
    var root: ManifestDigest
    /// The storage's name for the state they were read in.
    var mark: Int64
}
