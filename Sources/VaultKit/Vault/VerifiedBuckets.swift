/// The rows and digests of the manifest buckets this process verified, and the root it
/// verified or last committed: what a lone `set` is prepared from without a read
/// (``PreparedSet``) on a storage where every read is a round trip.
///
/// Why they outlive a commit elsewhere, when what reads rely on does not: on a shared
/// server the snapshot version moves with every commit to any table, and a prepared set
/// does not trust them anyway. The storage writes it only if, under the write lock, the
/// header still holds the kept generation and tag (so the root is the kept one), the
/// bucket's digest row the kept digest, and the item's place the kept row's nonce (or
/// nothing). Any writer that changes a row changes its bucket's digest and the header,
/// so a set prepared on a state gone out of date is refused there. It is then rebuilt
/// on the state found under the lock, with the digests proven there, if its own rows
/// are still in place (``UnlockedVault/commitRebased(_:preparedOn:)``); the kept rows
/// are dropped when the storage refuses that too (``ManifestCheck/resetAll(dataVersion:keepingProven:)``).
/// A change nobody recorded (an attacker's) is not folded in: the new digest and root
/// are computed from verified values and the set's own rows only, so the next
/// verification still finds it. They are dropped too when a verification fails, the
/// keys change, or ``Vault/verify()`` starts from nothing.
///
/// Why whole rows, not only their manifest terms: a `set` of an existing item keeps its
/// creation date and the attributes it does not give, which are inside the sealed
/// record. With the row at hand the new one is sealed before the transaction, and the
/// `set` is one round trip instead of two. The rows are kept as stored (ciphertext), for
/// at most ``rowLimit`` rows; buckets verified beyond that are not kept.
///
/// A class for the same reason as ``ManifestCheck``, under the same ``Vault`` mutex. A
/// write transaction's changes are recorded as it makes them and applied only once it
/// has committed.
final class VerifiedBuckets {
    struct Bucket {
        /// The bucket's digest row as this process last verified, wrote or proved it
        /// (zero: none). The sum of `rows`' terms until another writer changes the bucket
        /// (``follow(_:)``); the storage compares it with the stored row either way.
        var digest: ManifestDigest
        /// The rows as verified or written here, by lookup id.
        var rows: [[UInt8]: StoredRow]
    }

    /// The header's root as verified, with what its tag covers.
    struct Root {
        var root: ManifestDigest
        var header: VaultHeader
        var generation: UInt64
        var tag: ManifestDigest
    }

    /// About 20 MiB of rows for small items.
    static let rowLimit = 50_000

    private var buckets: [Int: Bucket] = [:]
    private(set) var rowCount = 0
    var root: Root?

    private var changedRows: [(lookupID: [UInt8], row: StoredRow?)] = []
    private var changedDigests: [(bucket: Int, digest: ManifestDigest)] = []
    private var committingRoot: Root?
    private var rootRewritten = false

    var hasRoom: Bool { rowCount < Self.rowLimit }

    /// The history retention as a verified read (or this process's write) found it: the
    /// settings row's id and nonce (`nil`: no row) and its value. A prepared `set` that
    /// keeps a version requires that row in place under the lock, so an entry gone out of
    /// date is refused there, never used; it outlives ``removeAll()`` for that reason.
    var retention: (lookupID: [UInt8], nonce: [UInt8]?, value: Int)?

    /// The nonces of kept versions this process wrote, by lookup id: how a prepared `set`
    /// names the version its retention trims (the storage deletes it only if it holds
    /// that nonce, so a stale one is refused as a retention is).
    private var versionNonces: [[UInt8]: [UInt8]] = [:]
    /// About 6 MiB; past it the nonces are forgotten (those `set`s are not prepared).
    static let versionNonceLimit = 100_000

    func versionNonce(_ lookupID: [UInt8]) -> [UInt8]? { versionNonces[lookupID] }

    func rememberVersion(_ lookupID: [UInt8], nonce: [UInt8]) {
        if versionNonces.count >= Self.versionNonceLimit { versionNonces = [:] }
        versionNonces[lookupID] = nonce
    }

    func forgetVersion(_ lookupID: [UInt8]) {
        versionNonces[lookupID] = nil
    }

    func bucket(_ index: Int) -> Bucket? { buckets[index] }

    /// Keeps a bucket's rows as just verified.
    func keep(_ index: Int, _ bucket: Bucket) {
        rowCount += bucket.rows.count - (buckets[index]?.rows.count ?? 0)
        buckets[index] = bucket
    }

    func removeAll() {
        buckets = [:]
        rowCount = 0
        root = nil
        discardTransaction()
    }

    /// Whether other processes have been writing the vault: the last `set` prepared from
    /// these was refused, or rebuilt on another's commit, so the next one goes straight to
    /// the lock (``UnlockedVault/commitRebased(_:preparedOn:)``).
    var othersWrite = false

    /// Moves the kept buckets' digests on to `digests`, proven against a root verified
    /// under the write lock, where another writer changed them. Their rows stay: each is
    /// still the row in its place if the storage finds its nonce there under the lock,
    /// and a `set` over it changes the bucket's digest by its own rows' terms only
    /// (``UnlockedVault/commitRebased(_:preparedOn:)``). The rows another writer added
    /// are not among them, so a row missing here proves nothing; the storage checks the
    /// item's place for that too.
    func follow(_ digests: [ManifestDigest]) {
        for (index, bucket) in buckets where bucket.digest != digests[index] {
            buckets[index]!.digest = digests[index]
        }
    }

    // MARK: The write transaction in progress

    func discardTransaction() {
        changedRows.removeAll()
        changedDigests.removeAll()
        committingRoot = nil
        rootRewritten = false
    }

    /// A row written (`row`) or removed (`nil`) in a kept bucket.
    func record(lookupID: [UInt8], row: StoredRow?) {
        let index = Manifest.bucket(of: lookupID)
        guard let bucket = buckets[index] else { return }
        // A bulk import into kept buckets would keep every row it writes: past the limit,
        // the bucket is no longer kept (its `set`s take the two round trips again).
        if row != nil, rowCount + changedRows.count >= Self.rowLimit {
            rowCount -= bucket.rows.count
            buckets[index] = nil
            return
        }
        changedRows.append((lookupID, row))
    }

    func record(bucket: Int, digest: ManifestDigest) {
        guard buckets[bucket] != nil else { return }
        changedDigests.append((bucket, digest))
    }

    func record(root: Root) {
        committingRoot = root
    }

    /// The transaction re-tags the root for a new header: the kept root is no longer the
    /// stored one, and the next `set` is not prepared until a write records one again.
    func rootRewrittenInTransaction() {
        rootRewritten = true
        committingRoot = nil
    }

    /// The transaction committed, and what was verified carried over to the new version.
    func applyTransaction() {
        for (lookupID, row) in changedRows {
            apply(lookupID: lookupID, row: row)
        }
        for (bucket, digest) in changedDigests {
            buckets[bucket]?.digest = digest
        }
        if let committingRoot {
            root = committingRoot
        } else if rootRewritten {
            root = nil
        }
        discardTransaction()
    }

    /// A prepared `set` committed, and what was verified carried over to the new version:
    /// its rows written (`nil`: deleted) and the digests of the buckets it changed.
    func applyPrepared(_ rows: [(lookupID: [UInt8], row: StoredRow?)], digests: [(bucket: Int, digest: ManifestDigest)], root: Root) {
        for (lookupID, row) in rows { apply(lookupID: lookupID, row: row) }
        for (bucket, digest) in digests { buckets[bucket]?.digest = digest }
        self.root = root
    }

    private func apply(lookupID: [UInt8], row: StoredRow?) {
        let index = Manifest.bucket(of: lookupID)
        // In place: a copy of the bucket would copy its rows.
        guard let had = buckets[index].map({ $0.rows[lookupID] != nil }) else { return }
        buckets[index]!.rows[lookupID] = row
        rowCount += (row == nil ? 0 : 1) - (had ? 1 : 0)
    }
}
