/// The manifest bucket digests this session has read or written, for one snapshot
/// version (``PostgresSnapshot``): a write applies its manifest changes without reading
/// the bucket it changes again, which saves a round trip per write.
///
/// Why this is sound: a version names the set of completed transactions, so rows read
/// under the version that is current are the rows stored now. In a write transaction the
/// digests read after the lock, and those written, become the next version's once the
/// transaction commits (the version after an own commit); should anything else have
/// committed meanwhile (an attacker's change to a bucket row included), every later
/// snapshot has another version and the cache starts empty again.
struct PostgresManifestCache {
    /// The version the known digests describe; `nil`: none.
    private(set) var version: Int64?
    /// Known digests by bucket; a `nil` value: the bucket has no row.
    private var digests: [Int: [UInt8]?] = [:]
    /// Every bucket's row is known: a bucket missing from `digests` has none.
    private var complete = false

    /// Describes `version` from now on, forgetting digests that describe another.
    mutating func use(_ version: Int64) {
        guard self.version != version else { return }
        self.version = version
        digests = [:]
        complete = false
    }

    /// The same digests describe `version` now (after this session's own commit).
    mutating func carry(to version: Int64) {
        self.version = version
    }

    mutating func forget() {
        version = nil
        digests = [:]
        complete = false
    }

    /// The digest of `bucket` if known: `.some(nil)` for a bucket known to have no row.
    func digest(_ bucket: Int) -> [UInt8]?? {
        if let known = digests[bucket] { return known }
        return complete ? .some(nil) : nil
    }

    mutating func record(_ bucket: Int, _ digest: [UInt8]?) {
        digests[bucket] = digest
    }

    /// Every bucket's row, read in one statement.
    mutating func recordAll(_ rows: [Int: [UInt8]]) {
        digests = rows.mapValues { Optional($0) }
        complete = true
    }

    /// Every bucket's row deleted.
    mutating func removeAll() {
        digests = [:]
        complete = true
    }
}
