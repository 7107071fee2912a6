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
///
/// A version is a number of this storage's own, never handed out twice.
struct PostgresRowVersions {
    /// The header row's and the host key wraps' `xmin`s.
    struct VaultState: Equatable {
        /// `nil`: the vault has no header row.
        var header: UInt32?
        /// The wraps' `xmin`s in ascending order, comma-separated; `nil` for none.
        var hostWraps: String?
    }

    /// Rows kept per version at most: about 25 MiB. Past it a row is not kept, and a
    /// lone read of it verifies its bucket again (as every read did before).
    static let rowLimit = 1 << 20

    private(set) var version: Int64 = 1
    private var lastVersion: Int64 = 1
    /// `nil`: not known (never read, or after a write whose result is not derivable).
    private var state: VaultState?
    /// `xmin` by the lookup id's first 8 bytes (lookup ids are keyed hashes, so uniform).
    private var rows: [UInt64: UInt32] = [:]
    /// Lookup id ranges read whole under this version: a row not in `rows` has none.
    private var ranges: [(lower: [UInt8], upper: [UInt8]?)] = []
    private var coversAll = false

    /// What a transaction read or wrote, applied when it ends well.
    private var reads: [(key: UInt64, xmin: UInt32)] = []
    private var readRanges: [(lower: [UInt8], upper: [UInt8]?)] = []
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

    /// Whether the row of `lookupID` a lone read found (`xmin`, `nil` for none) is the
    /// one kept under this version; else the version is tainted.
    mutating func confirm(lookupID: [UInt8], xmin: UInt32?) -> Int64 {
        let key = Self.key(lookupID)
        let known = rows[key]
        let confirmed = if let xmin { known == xmin } else { known == nil && covers(lookupID) }
        if !confirmed { startNewVersion() }
        return version
    }

    private func covers(_ lookupID: [UInt8]) -> Bool {
        coversAll || ranges.contains { range in
            !lookupID.lexicographicallyPrecedes(range.lower) && range.upper.map { lookupID.lexicographicallyPrecedes($0) } ?? true
        }
    }

    /// A new version for a vault state not known: whatever the engine verified is not vouched for.
    mutating func forgetState() -> Int64 {
        state = nil
        startNewVersion()
        return version
    }

    private mutating func startNewVersion() {
        lastVersion += 1
        version = lastVersion
        rows = [:]
        ranges = []
        coversAll = false
    }

    // MARK: A transaction's reads and writes

    /// The transaction's rows are read under `version` (its vault state was seen).
    mutating func readsBelong(to version: Int64) {
        readsVersion = version
    }

    mutating func read(lookupID: UnsafeRawBufferPointer, xmin: UInt32?) {
        guard let xmin, reads.count + rows.count < Self.rowLimit else { return }
        reads.append((Self.key(lookupID), xmin))
    }

    /// The rows of `range` (`nil`: all) were all read.
    mutating func readWhole(_ range: (lower: [UInt8], upper: [UInt8]?)?) {
        if let range { readRanges.append(range) } else { readAll = true }
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
            let carried = (rows, ranges, coversAll)
            state = next
            startNewVersion()
            (rows, ranges, coversAll) = carried
            for (key, deleted) in writes {
                if !deleted, rows.count < Self.rowLimit { rows[key] = header } else { rows[key] = nil }
            }
            if forgetsRows { rows = [:]; ranges = []; coversAll = false }
        } else {
            state = nil
            startNewVersion()
        }
        discardTransaction()
        return version
    }

    mutating func discardTransaction() {
        reads = []
        readRanges = []
        readAll = false
        readsVersion = nil
        writes = []
        forgetsRows = false
    }

    private mutating func applyReads() {
        for (key, xmin) in reads where rows.count < Self.rowLimit || rows[key] != nil { rows[key] = xmin }
        ranges += readRanges
        coversAll = coversAll || readAll
    }

    /// The header's `xmin` the vault state holds, for a prepared set's `UPDATE` to require.
    var headerXmin: UInt32? { state?.header }
    var hostWraps: String? { state?.hostWraps }

    private static func key(_ lookupID: [UInt8]) -> UInt64 {
        lookupID.withUnsafeBytes { key($0) }
    }

    private static func key(_ lookupID: UnsafeRawBufferPointer) -> UInt64 {
        var key: UInt64 = 0
        for byte in lookupID.prefix(8) { key = key << 8 | UInt64(byte) }
        return key
    }

    /// A transaction id as `xmin::text` prints it (32 bits); `nil` for anything else.
    static func xid(_ text: String) -> UInt32? { UInt32(text) }
}
