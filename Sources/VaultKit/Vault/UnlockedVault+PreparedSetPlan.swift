extension UnlockedVault {
    /// What a lone `set` writes, apart from the root it builds on: its rows and the
    /// digests of the buckets they change, from what was verified and kept. Kept apart
    /// from the root so a set the storage refused can be rebuilt on the root it finds
    /// under the lock (``commitRebased(_:preparedOn:)``) without being sealed again.
    struct PreparedSetPlan {
        /// The item's new row, and the nonce of the row it replaces (`nil`: none).
        var row: StoredRow
        var replacedNonce: [UInt8]?
        /// The item's bucket.
        var bucket: Int
        /// Every row the set writes (`nil`: deletes).
        var rows: [(lookupID: [UInt8], row: StoredRow?)]
        /// Each bucket it changes, in order: its digest as kept or proven, and after.
        var digests: [(bucket: Int, before: ManifestDigest, after: ManifestDigest)]
        /// What it keeps as a version (docs/FORMAT.md section 14), if it does.
        var archive: PreparedArchive?

        /// The plan on `proven`, digests proven against the root found under the lock,
        /// where other writers may have changed its buckets: each digest moves by the same
        /// terms, those of the rows the set writes and of the rows it replaces or trims.
        /// Why that is the digest a write transaction would write: the storage commits
        /// only where each of those rows is in its place under the lock (its nonce, or
        /// none), and a row's term is its identity and nonce. A row of another writer's
        /// is left in the digest as proven, so a row the DBA deleted or put back there
        /// stays a mismatch the next verification of the bucket reports.
        func rebased(on proven: [ManifestDigest]) -> PreparedSetPlan {
            var plan = self
            plan.digests = digests.map { ($0.bucket, proven[$0.bucket], proven[$0.bucket] + ($0.after - $0.before)) }
            return plan
        }
    }

    /// `plan` on `before`: the new root (the changed buckets' terms swapped), the next
    /// generation and its tag, and the storage's checks (``PreparedSet``).
    func preparedSet(_ plan: PreparedSetPlan, on before: VerifiedBuckets.Root) -> (set: PreparedSet, after: VerifiedBuckets.Root) {
        var root = before.root
        for (changed, old, new) in plan.digests {
            if !old.isZero { root -= manifestCheck.bucketTerm(changed, digest: old, keys: keys) }
            if !new.isZero { root += manifestCheck.bucketTerm(changed, digest: new, keys: keys) }
        }
        let own = plan.digests.first { $0.bucket == plan.bucket }!
        let generation = before.generation + 1
        let tag = keys.manifestRootTag(root, header: before.header, generation: generation)
        var prepared = PreparedSet(
            row: plan.row, replacedNonce: plan.replacedNonce, bucket: plan.bucket,
            digestBefore: own.before.isZero ? nil : own.before.bytes, digestAfter: own.after.isZero ? nil : own.after.bytes,
            generationBefore: before.generation, tagBefore: before.tag.bytes,
            root: root.bytes, tag: tag.bytes, generation: generation
        )
        if let archive = plan.archive {
            prepared.settings = archive.settings
            prepared.version = archive.version?.row
            prepared.trimmed = archive.trimmed.map { ($0.lookupID, $0.nonce) }
            prepared.noRowsOfServiceTag = archive.noVersionsOf
            prepared.otherBuckets = plan.digests.filter { $0.bucket != plan.bucket }.map {
                ($0.bucket, $0.before.isZero ? nil : $0.before.bytes, $0.after.isZero ? nil : $0.after.bytes)
            }
        }
        return (prepared, .init(root: root, header: before.header, generation: generation, tag: tag))
    }
}
