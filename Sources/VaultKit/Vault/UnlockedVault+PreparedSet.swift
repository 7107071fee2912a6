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
    /// the caller then writes as any other `set`. A `set` that would keep the item it
    /// writes over as a version writes more than one bucket, so it is never prepared.
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
        if replaced != nil, keepHistory { return false }
        // The stored item's attributes, from its record, which must belong in this place.
        let existing = try replaced.map { (row) throws(VaultError) in try openRecord(row) }
        let now = Date()
        let item = VaultItem(
            service: service, account: account,
            label: label ?? existing?.0.label, generic: generic ?? existing?.0.generic,
            created: existing?.0.created ?? now, modified: now
        )
        let number = existing?.3.nextNumberWithoutArchive ?? 0
        let sealed = seal(item, secret: secret, provenance: provenance(number: number, .set), lookupID: lookupID, serviceTag: keys.serviceTag(service: service))
        let row = sealed.row
        var digest = bucket.digest
        if let replaced { digest -= OrderedRowScan.term(of: replaced, keys: keys) }
        digest += OrderedRowScan.term(of: row, keys: keys)
        var root = before.root
        if !bucket.digest.isZero { root -= manifestCheck.bucketTerm(index, digest: bucket.digest, keys: keys) }
        if !digest.isZero { root += manifestCheck.bucketTerm(index, digest: digest, keys: keys) }
        let generation = before.generation + 1
        let tag = keys.manifestRootTag(root, header: before.header, generation: generation)
        let prepared = PreparedSet(
            row: row, replacedNonce: replaced?.nonce, bucket: index,
            digestBefore: bucket.digest.isZero ? nil : bucket.digest.bytes, digestAfter: digest.isZero ? nil : digest.bytes,
            generationBefore: before.generation, tagBefore: before.tag.bytes,
            root: root.bytes, tag: tag.bytes, generation: generation
        )
        let versionPrepared = manifestCheck.dataVersion
        switch try store.commit(prepared) {
        case .stale:
            // The vault is not as kept (another process wrote, or re-keyed): verify afresh
            // (the proven digests stay: the next check sums them with what changed).
            manifestCheck.resetAll(keepingProven: true)
            return false
        case .committed(let versionBefore):
            // Something else committed since this process last verified (anywhere on the
            // server: the version is the server's): reads verify again; the rows kept
            // stay, with this write.
            if versionBefore == versionPrepared {
                manifestCheck.ownCommit(from: versionPrepared, to: store.snapshotVersion)
            } else {
                manifestCheck.reset(dataVersion: store.snapshotVersion)
            }
            verified.applyPrepared(row, bucket: index, digest: digest,
                                   root: .init(root: root, header: before.header, generation: generation, tag: tag))
            manifestCheck.recordProven(bucket: index, digest: digest)
            manifestCheck.recordProven(rootBefore: before.root, after: root)
            manifestCheck.applyProvenChanges()
            manifestCheck.committing = (generation, root)
            recordCommit()
            return true
        }
    }
}
