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
