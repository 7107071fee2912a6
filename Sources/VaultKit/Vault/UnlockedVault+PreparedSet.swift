#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UnlockedVault {
    /// A lone `set` in one storage call (``PreparedSet``), prepared from the rows, digest
    /// and root this process verified for the item's bucket (``VerifiedBuckets``): on a
    /// database, one round trip instead of two. Returns `false`, having written nothing,
    /// when there is nothing to prepare it from or the storage found the vault changed;
    /// the caller then writes as any other `set`. A `set` that keeps the item it writes
    /// over as a version prepares that too (``preparedArchive(of:service:account:)``): its
    /// other buckets' digests are the kept or proven ones, checked under the lock as well.
    ///
    /// The storage commits it only where the stored header, row and digest are the ones
    /// it was prepared from, so it writes exactly what the same `set` would after reading
    /// them. Should anything else have committed since this process last verified (a
    /// write to another vault or table on the server, an attacker's change), the commit
    /// is kept, and the next read verifies again, and sees it; the kept rows stay, so the
    /// next `set` is prepared too. Another process's write to this vault moves the
    /// header on, and the storage refuses the prepared set instead.
    func commitPreparedSet(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws(VaultError) -> Bool {
        guard store.commitsPreparedSets else { return false }
        try Self.validateWrite(secret: secret, service: service, account: account, generic: generic)
        let lookupID = keys.lookupID(service: service, account: account)
        let index = Manifest.bucket(of: lookupID)
        let verified = manifestCheck.verified
        // Not `manifestCheck.covers`: what a commit elsewhere on the server made reads
        // verify again cannot make this write wrong, since the storage checks under the
        // lock everything it is prepared from (VerifiedBuckets).
        guard let bucket = verified.bucket(index), let before = verified.root else { return false }
        let replaced = bucket.rows[lookupID]
        // The stored item's attributes, from its record, which must belong in this place.
        let existing = try replaced.map { (row) throws(VaultError) in try openRecord(row) }
        var archive: PreparedArchive?
        if let existing, keepHistory {
            guard let prepared = preparedArchive(of: existing, service: service, account: account) else { return false }
            archive = prepared
        }
        let now = Date()
        let item = VaultItem(
            service: service, account: account,
            label: label ?? existing?.0.label, generic: generic ?? existing?.0.generic,
            created: existing?.0.created ?? now, modified: now
        )
        let number = archive?.nextNumber ?? existing?.3.nextNumberWithoutArchive ?? 0
        let sealed = seal(item, secret: secret, provenance: provenance(number: number, .set), lookupID: lookupID, serviceTag: keys.serviceTag(service: service))
        let row = sealed.row
        // Every row the set writes (`nil`: deletes), and the change each makes to its bucket.
        var rows: [(lookupID: [UInt8], row: StoredRow?)] = [(lookupID, row)]
        var deltas: [Int: ManifestDigest] = [index: OrderedRowScan.term(of: row, keys: keys)]
        if let replaced { deltas[index]! -= OrderedRowScan.term(of: replaced, keys: keys) }
        if let version = archive?.version?.row {
            rows.append((version.lookupID, version))
            deltas[Manifest.bucket(of: version.lookupID), default: .zero] += OrderedRowScan.term(of: version, keys: keys)
        }
        if let trimmed = archive?.trimmed {
            rows.append((trimmed.lookupID, nil))
            deltas[Manifest.bucket(of: trimmed.lookupID), default: .zero] -= OrderedRowScan.term(of: trimmed, keys: keys)
        }
        // The other buckets' digests: kept, or proven against the kept root.
        let proven = manifestCheck.proven.flatMap { $0.root == before.root ? $0 : nil }
        var digests: [(bucket: Int, before: ManifestDigest, after: ManifestDigest)] = []
        for (changed, delta) in deltas.sorted(by: { $0.key < $1.key }) {
            let old: ManifestDigest
            if changed == index {
                old = bucket.digest
            } else if let kept = verified.bucket(changed)?.digest ?? proven?.digests[changed] {
                old = kept
            } else {
                return false
            }
            digests.append((changed, old, old + delta))
        }
        let plan = PreparedSetPlan(row: row, replacedNonce: replaced?.nonce, bucket: index, rows: rows, digests: digests, archive: archive)
        let versionPrepared = manifestCheck.dataVersion
        var committed: (versionBefore: Int64?, rootBefore: ManifestDigest, after: VerifiedBuckets.Root, digests: [(bucket: Int, before: ManifestDigest, after: ManifestDigest)])?
        if !verified.othersWrite {
            let (prepared, after) = preparedSet(plan, on: before)
            if case .committed(let versionBefore) = try store.commit(prepared) { committed = (versionBefore, before.root, after, digests) }
        }
        if committed == nil {
            // Another process wrote the vault since (or re-keyed it), or, after it last did,
            // most likely has: the set is rebuilt on the state found under the lock, if
            // nothing it builds on changed.
            guard let rebased = try commitRebased(plan, preparedOn: before) else {
                // Verify afresh (the proven digests stay: the next check sums them with
                // what changed).
                manifestCheck.resetAll(keepingProven: true)
                return false
            }
            committed = (nil, rebased.rootBefore, rebased.after, rebased.digests)
        }
        guard let committed else { return false }
        // Something else committed since this process last verified (anywhere on the
        // server: the version is the server's): reads verify again; the rows kept stay,
        // with this write.
        if committed.versionBefore == versionPrepared {
            manifestCheck.ownCommit(from: versionPrepared, to: store.snapshotVersion)
        } else {
            manifestCheck.reset(dataVersion: store.snapshotVersion)
        }
        verified.applyPrepared(rows, digests: committed.digests.map { ($0.bucket, $0.after) }, root: committed.after)
        if let version = archive?.version?.row { verified.rememberVersion(version.lookupID, nonce: version.nonce) }
        if let trimmed = archive?.trimmed { verified.forgetVersion(trimmed.lookupID) }
        for (changed, _, new) in committed.digests { manifestCheck.recordProven(bucket: changed, digest: new) }
        manifestCheck.recordProven(rootBefore: committed.rootBefore, after: committed.after.root)
        manifestCheck.applyProvenChanges(mark: store.manifestMarkOfLastCommit)
        manifestCheck.committing = (committed.after.generation, committed.after.root)
        recordCommit()
        return true
    }
}
