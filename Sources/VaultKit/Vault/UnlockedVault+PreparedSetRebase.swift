/// A prepared `set` the storage refused because another process wrote the vault since
/// this one verified it, rebuilt on the state found under the write lock.
///
/// Why: with several writers on one vault nearly every prepared `set` meets another's
/// commit. The write transaction it fell back to holds the vault's one header row lock
/// across a round trip per read (the root, the changed buckets, the item's bucket, its
/// versions), so writes queued on that lock and did not scale with writers. Rebuilt, the
/// `set` holds the lock for two: the lock with the header and the changed buckets, then
/// the rows with `COMMIT` (docs/POSTGRES.md, "Writes from many processes").
///
/// What it trusts is what a write transaction would, checked the same way under the
/// lock: the header's tag over the root and generation it finds, the rollback record
/// compared with that state, and every bucket digest at it, known from the digests
/// proven before and the bucket rows listed as changed since, which must sum to that
/// root (a listing a DBA edited cannot pass, only make the `set` fall back). The `set`'s
/// own buckets may have changed since it was prepared (another writer's item in the same
/// bucket): their digests are the proven ones moved by the set's own rows' terms
/// (``PreparedSetPlan/rebased(on:)``), and the storage checks the item's row, the
/// versions and those digests as it writes.
extension UnlockedVault {
    /// Rebuilds `plan` (prepared on `before`) on the locked state and commits it; `nil`,
    /// having written nothing, when that state is neither `before` nor a plain later write
    /// of the same vault (a re-key, a passphrase or host change, a header that does not
    /// verify), the changed buckets cannot be listed or do not sum to its root, or the
    /// storage finds a row the set replaces or trims no longer in its place (another
    /// writer wrote the same item): the caller then writes as any other `set`, which
    /// reads and verifies what it needs.
    ///
    /// Taken after the storage refused the set, and, while other processes keep writing,
    /// instead of offering it first (``VerifiedBuckets/othersWrite``): the offer would
    /// wait for the lock only to be refused. Once a rebuild finds nobody wrote since, sets
    /// are offered first again.
    /// - Returns: the root the set was rebuilt on, the one it committed, and the digests
    ///   of the buckets it changed, before and after.
    /// - Throws: ``VaultError/rolledBack`` when the locked state is older than the
    ///   rollback record, as a write transaction would.
    func commitRebased(_ plan: PreparedSetPlan, preparedOn before: VerifiedBuckets.Root) throws(VaultError) -> Rebased? {
        // What reads rely on is verified again after this (the buckets verified at the
        // proven digests are noted now, before those move on, to be carried).
        manifestCheck.reset()
        manifestCheck.discardProvenChanges()
        manifestCheck.verified.othersWrite = true
        guard let mark = manifestCheck.proven?.mark else { return nil }
        var rebased: Rebased?
        let outcome = try store.commitRebased(changedSince: mark) { () throws(VaultError) -> PreparedSet? in
            let locked: (root: ManifestDigest, header: VaultHeader, generation: UInt64)
            do throws(VaultError) {
                locked = try verifiedStoredRoot()
            } catch where error.code == .tampered {
                // A re-key by another process, or worse: the write transaction tells which.
                return nil
            }
            let (root, header, generation) = locked
            let unchanged = generation == before.generation && root == before.root
            guard header.authenticatedBytes == before.header.authenticatedBytes, generation > before.generation || unchanged,
                  let proven = try provenFromChanges(to: root, including: nil) else { return nil }
            // Compared before anything is written on it (a write transaction compares
            // what it verifies under the lock the same way); recorded by this commit's successor.
            manifestCheck.holdsWriteLock = true
            defer { manifestCheck.holdsWriteLock = false }
            try noteVerifiedState((generation, root))
            manifestCheck.proven = proven
            manifestCheck.verified.follow(proven.digests)
            if unchanged { manifestCheck.verified.othersWrite = false }
            let tag = keys.manifestRootTag(root, header: header, generation: generation)
            let plan = plan.rebased(on: proven.digests)
            let (set, after) = preparedSet(plan, on: .init(root: root, header: header, generation: generation, tag: tag))
            rebased = Rebased(rootBefore: root, after: after, digests: plan.digests)
            return set
        }
        guard case .committed = outcome else { return nil }
        return rebased
    }

    /// What ``commitRebased(_:preparedOn:)`` committed.
    struct Rebased {
        var rootBefore: ManifestDigest
        var after: VerifiedBuckets.Root
        var digests: [(bucket: Int, before: ManifestDigest, after: ManifestDigest)]
    }
}
