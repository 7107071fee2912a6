/// What ``PostgresVaultStorage/snapshotVersion`` names: this vault's state as the engine
/// last verified it, told by row versions (`xmin`, the id of the transaction that wrote
/// a row version), not by the cluster's snapshot, so a commit to another table or
/// another vault leaves what the engine verified standing.
///
/// Why row versions and not a counter the writers bump: anyone who changes a row, with
/// VaultKit or with SQL, writes a new row version, whose `xmin` is its own transaction's
/// id; a counter is bumped only by those who choose to. So:
/// - the **vault state** is the header row's `xmin` and the host key wraps' (every write
///   of the engine updates the header row, under its lock): a change to it is a new
///   version, and the engine verifies again, as it did on any commit before;
/// - the **rows** the engine verified under a version are kept with their `xmin` (and the
///   lookup id ranges it read whole, where a row missing from the map is known to have
///   none): a lone read whose row has another `xmin`, or is there where none was, or is
///   gone, **taints** the version (a new one, with the same vault state), so the engine
///   verifies that bucket again. That is what catches a row changed, put back or deleted
///   by someone who left the header alone (docs/THREAT-MODEL.md, "PostgreSQL").
/// - Rows are kept **per manifest bucket**, and a new version holds what vouched under the
///   old one: once the engine has verified the new root, it carries the buckets it had
///   verified into the new version (``carry(unchanged:changed:)``), so its lone reads stay
///   one statement after another process's write: whole where the bucket's digest is
///   unchanged, and only the rows kept (no absence) where another writer changed it. A
///   bucket whose lone read did not match what was held is never carried.
///
/// A version is a number of this storage's own, never handed out twice.
struct PostgresRowVersions {
    /// The header row's and the host key wraps' `xmin`s.
    struct VaultState: Equatable {
        /// `nil`: the vault has no header row.
        var header: UInt32?
        /// The wraps' `xmin`s in ascending order, comma-separated; `nil` for none.
        var hostWraps: String?
        /// The header row's flag saying the vault has wraps (false without a header row):
        /// without it, a lone read leaves the wraps out (``PostgresSQL/loneReadWithoutHostWraps``).
        /// Part of the header row, so it changes only with `header`.
        var hasHostWraps: Bool
    }

    /// Rows kept per version at most: about 25 MiB. Past it a row is not kept, and a
    /// lone read of it verifies its bucket again (as every read did before).
    static let rowLimit = 1 << 20

    /// The row versions of one manifest bucket (the lookup id's first 10 bits) verified
    /// under a version.
    struct BucketRows {
        /// `xmin` by the lookup id's first 8 bytes (lookup ids are keyed hashes, so uniform).
        private(set) var rows: [UInt64: UInt32] = [:]
        /// `rows.count`, kept beside it. Why: a dictionary's count is in its heap storage,
        /// and carrying every bucket after another process's commit read it for each of
        /// the 1,024: a cache miss per bucket, about 90% of ``PostgresRowVersions/carry(unchanged:changed:)``'s
        /// time (perf, 50/50 load at four writers). Here it is in the table's own array.
        private(set) var count = 0
        /// Read whole: a row not in `rows` has none.
        var whole = false

        init(whole: Bool = false) {
            self.whole = whole
        }

        func vouches(for key: UInt64, xmin: UInt32?) -> Bool {
            if let xmin { rows[key] == xmin } else { rows[key] == nil && whole }
        }

        func has(_ key: UInt64) -> Bool { rows[key] != nil }

        /// Keeps `xmin` for the row `key`, or forgets the row (`nil`).
        mutating func set(_ key: UInt64, _ xmin: UInt32?) {
            if let xmin {
                if rows.updateValue(xmin, forKey: key) == nil { count += 1 }
            } else if rows.removeValue(forKey: key) != nil {
                count -= 1
            }
        }
    }

    private(set) var version: Int64 = 1
    private var lastVersion: Int64 = 1
    /// `nil`: not known (never read, or after a write whose result is not derivable).
    private var state: VaultState?
    /// What vouches for lone reads under `version`, by bucket.
    private var buckets = PostgresBucketTable()
    private var rowCount = 0
    /// What vouched under earlier versions and was not found changed since: the engine
    /// carries a bucket's rows into the new version once it has verified the new root
    /// (``carry(unchanged:changed:)``).
    private var held = PostgresBucketTable()

    /// What a transaction read or wrote, applied when it ends well.
    private var reads: [(key: UInt64, xmin: UInt32)] = []
    private var readBuckets: [Int] = []
    private var readAll = false
    /// The version the transaction's reads belong to (set once its state is seen).
    private var readsVersion: Int64?
    private var writes: [(key: UInt64, deleted: Bool)] = []
    private var forgetsRows = false

    /// The version for `state` as a statement saw it: the same as before if the state is.
    mutating func observe(_ seen: VaultState) -> Int64 {
        if seen != state {
            state = seen
            startNewVersion()
        }
        return version
    }

    /// Whether a read elsewhere (a standby) saw exactly what this version holds: the
    /// vault state, and the row of `lookupID` at `xmin` (`nil`: none) kept under it.
    /// Changes nothing either way: a standby that lags or runs ahead is no evidence.
    func holds(_ seen: VaultState, lookupID: [UInt8], xmin: UInt32?) -> Bool {
        guard let state, seen == state else { return false }
        let key = Self.key(lookupID)
        return buckets[Self.bucket(key)]?.vouches(for: key, xmin: xmin) == true
    }

    /// Whether the row of `lookupID` a lone read found (`xmin`, `nil` for none) is the
    /// one kept under this version; else the version is tainted, and the row's bucket is
    /// not carried unless what is held for it says the same.
    mutating func confirm(lookupID: [UInt8], xmin: UInt32?) -> Int64 {
        let key = Self.key(lookupID)
        let bucket = Self.bucket(key)
        if buckets[bucket]?.vouches(for: key, xmin: xmin) == true { return version }
        if held[bucket]?.vouches(for: key, xmin: xmin) != true { held[bucket] = nil }
        if let tainted = buckets.remove(bucket) { rowCount -= tainted.count }
        startNewVersion()
        return version
    }

    /// Whether a row a transaction read by itself (`xmin` `nil`: none) is one the engine
    /// verified: kept under this version, in a bucket the transaction read whole, or
    /// written by the transaction itself. Else the version is tainted, as by a lone read
    /// (``confirm(lookupID:xmin:)``), so the engine verifies that bucket again in the
    /// transaction's snapshot before it relies on the row: a row put back by someone who
    /// left the header alone is caught. A write transaction asks under the lock, before
    /// it replaces, keeps as a version or deletes the row; a read transaction, before a
    /// `get` that found the row's bucket carried trusts it.
    mutating func confirmInTransaction(lookupID: UnsafeRawBufferPointer, xmin: UInt32?) -> Int64 {
        let key = Self.key(lookupID)
        let bucket = Self.bucket(key)
        if readAll || readBuckets.contains(bucket) || writes.contains(where: { $0.key == key }) { return version }
        return confirm(lookupID: Array(lookupID), xmin: xmin)
    }

    /// A new version for a vault state not known: whatever the engine verified is not vouched for.
    mutating func forgetState() -> Int64 {
        state = nil
        startNewVersion(holding: false)
        return version
    }

    /// What vouched under this version is held for the engine to carry (`holding`), or
    /// dropped.
    private mutating func startNewVersion(holding: Bool = true) {
        lastVersion += 1
        version = lastVersion
        if holding {
            held.take(&buckets)
        } else {
            held.removeAll()
            buckets.removeAll()
        }
        rowCount = 0
    }

    /// Keeps under this version what was held for the buckets the engine verified again
    /// under a new root: `unchanged` ones (their digests are the same) as they were,
    /// `changed` ones (another writer wrote into them) for their rows only, so that no
    /// row's absence is vouched for there. Returns the buckets now vouched for.
    ///
    /// Why a changed bucket's rows still vouch: a row at the `xmin` kept is the very row
    /// version the engine verified, still current, since whoever replaces or deletes a
    /// row through the server ends that version for good. Its absence does not: another
    /// writer may have added the row, and someone else deleted it since.
    mutating func carry(unchanged: [Int], changed: [Int]) -> [Int] {
        unchanged.filter { carry($0, unchanged: true) } + changed.filter { carry($0, unchanged: false) }
    }

    private mutating func carry(_ bucket: Int, unchanged: Bool) -> Bool {
        if buckets[bucket] != nil { return true }
        guard var rows = held.remove(bucket), rowCount + rows.count <= Self.rowLimit else { return false }
        if !unchanged { rows.whole = false }
        buckets[bucket] = rows
        rowCount += rows.count
        return true
    }

    // MARK: A transaction's reads and writes

    /// The transaction's rows are read under `version` (its vault state was seen).
    mutating func readsBelong(to version: Int64) {
        readsVersion = version
    }

    mutating func read(lookupID: UnsafeRawBufferPointer, xmin: UInt32?) {
        guard let xmin, reads.count + rowCount < Self.rowLimit else { return }
        reads.append((Self.key(lookupID), xmin))
    }

    /// The rows of `range` (`nil`: all) were all read. Only a whole bucket's range (or
    /// all) counts: the engine reads no other.
    mutating func readWhole(_ range: (lower: [UInt8], upper: [UInt8]?)?) {
        guard let range else {
            readAll = true
            return
        }
        guard range.lower.count == 2, range.lower[1] & 0x3F == 0 else { return }
        let bucket = Int(range.lower[0]) << 2 | Int(range.lower[1]) >> 6
        let next = bucket + 1 < Self.bucketCount ? [UInt8(truncatingIfNeeded: (bucket + 1) >> 2), UInt8(truncatingIfNeeded: ((bucket + 1) & 3) << 6)] : nil
        guard range.upper == next else { return }
        readBuckets.append(bucket)
    }

    /// A row written by this transaction, or deleted.
    mutating func wrote(lookupID: [UInt8], deleted: Bool = false) {
        writes.append((Self.key(lookupID), deleted))
    }

    /// Rows deleted that are not named one by one.
    mutating func forgetRows() {
        forgetsRows = true
    }

    /// A read transaction ended: its rows are kept if its version is still the current one.
    mutating func endRead() {
        if readsVersion == version { applyReads() }
        discardTransaction()
    }

    /// A write transaction committed, as transaction `own` (`nil`: not known); it wrote
    /// the header row if `wroteHeader`, and `derivable` says whether the new vault state
    /// follows from what it wrote (no host wraps rewritten). Returns the version after
    /// the commit: the same if nothing was written.
    mutating func committed(own: UInt32?, wroteHeader: Bool, derivable: Bool) -> Int64 {
        let wroteRows = !writes.isEmpty || forgetsRows
        if !wroteHeader, !wroteRows {
            if readsVersion == version { applyReads() }
        } else if derivable, wroteHeader, let header = own, var next = state, readsVersion == version {
            applyReads()
            next.header = header
            // A new version with what it verified and wrote: no other writer could commit
            // while it held the lock. Held rows of the buckets it wrote no longer describe them.
            state = next
            lastVersion += 1
            version = lastVersion
            for (key, _) in writes { held[Self.bucket(key)] = nil }
            for (key, deleted) in writes {
                let bucket = Self.bucket(key)
                let had = buckets[bucket]?.has(key) == true
                if !deleted, rowCount < Self.rowLimit {
                    buckets[bucket, default: .init()].set(key, header)
                    if !had { rowCount += 1 }
                } else if had {
                    buckets[bucket]?.set(key, nil)
                    rowCount -= 1
                }
            }
            if forgetsRows { buckets.removeAll(); held.removeAll(); rowCount = 0 }
        } else {
            state = nil
            startNewVersion(holding: false)
        }
        discardTransaction()
        return version
    }

    mutating func discardTransaction() {
        reads = []
        readBuckets = []
        readAll = false
        readsVersion = nil
        writes = []
        forgetsRows = false
    }

    private mutating func applyReads() {
        // A bucket read whole now replaces what was kept of it.
        if readAll {
            buckets.removeAll()
            held.removeAll()
            rowCount = 0
            for bucket in 0..<Self.bucketCount { buckets[bucket] = .init(whole: true) }
        }
        for bucket in readBuckets {
            rowCount -= buckets[bucket]?.count ?? 0
            buckets[bucket] = .init(whole: true)
            held[bucket] = nil
        }
        for (key, xmin) in reads {
            let bucket = Self.bucket(key)
            let had = buckets[bucket]?.has(key) == true
            guard had || rowCount < Self.rowLimit else { continue }
            buckets[bucket, default: .init()].set(key, xmin)
            if !had { rowCount += 1 }
        }
    }

    /// The header's `xmin` the vault state holds, for a prepared set's `UPDATE` to require.
    var headerXmin: UInt32? { state?.header }
    var hostWraps: String? { state?.hostWraps }
    /// Whether the header row of the state held says the vault has no host key wraps
    /// (`false` when no state is held).
    var heldHeaderHasNoHostWraps: Bool { state?.hasHostWraps == false }

    private static func key(_ lookupID: [UInt8]) -> UInt64 {
        lookupID.withUnsafeBytes { key($0) }
    }

    private static func key(_ lookupID: UnsafeRawBufferPointer) -> UInt64 {
        var key: UInt64 = 0
        for byte in lookupID.prefix(8) { key = key << 8 | UInt64(byte) }
        return key
    }

    /// The manifest bucket of a row (docs/FORMAT.md section 6: the lookup id's first 10 bits).
    static let bucketCount = 1024

    private static func bucket(_ key: UInt64) -> Int { Int(key >> 54) }

    /// A transaction id as `xmin::text` prints it (32 bits); `nil` for anything else.
    static func xid(_ text: String) -> UInt32? { UInt32(text) }
}
