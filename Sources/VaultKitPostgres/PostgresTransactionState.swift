import VaultKit

/// Where ``PostgresVaultStorage``'s session is in a transaction, and what each kind of
/// transaction keeps until it ends.
///
/// Why one enum: what a transaction keeps (the header row, the lock's snapshot, a row
/// found by an insert, the insert sent with the lock) is valid only in that kind of
/// transaction, and only until it ends. As cases carrying their own state, a read cannot
/// hold a write's lock snapshot, nothing is kept once the storage is ``idle``, and ending
/// a transaction is one assignment, so nothing kept can outlive it.
enum PostgresTransactionState {
    /// No transaction: each call is a statement of its own, and a session the server
    /// ended may be replaced first.
    case idle
    /// A write transaction's `BEGIN` and lock are queued or on their way; the header row
    /// read after the lock is not in yet.
    case locking
    /// A REPEATABLE READ, READ ONLY transaction.
    case reading(Read)
    /// A write transaction holding the lock (the header row `FOR UPDATE`).
    case writing(Write)
    /// A prepared `set`'s pipeline is in flight: one implicit transaction on the server,
    /// which ends at its sync point (``PostgresVaultStorage/commit(_:)``).
    case committingPreparedSet

    /// What a read transaction keeps.
    struct Read {
        /// The snapshot's name and the vault state its first statement saw, once that
        /// statement's answer is in.
        var first: (snapshot: String, state: PostgresRowVersions.VaultState)?
        /// The header row, once read.
        var headerRow: PostgresHeaderRow?
        /// ``PostgresVaultStorage/pinSnapshot()`` named the snapshot, so the manifest
        /// digests kept for it may answer reads.
        var pinned = false
        /// The changed buckets asked for ahead (``PostgresVaultStorage/prefetchManifestBuckets(changedSince:including:)``)
        /// and, once answered, the rows: sent with the first statement, read in its snapshot.
        var prefetch: (mark: Int64, bucket: Int?, rows: [(bucket: Int64, digest: [UInt8]?)]?)?
        /// The item row asked for ahead (``PostgresVaultStorage/prefetchItem(lookupID:)``)
        /// and, once answered, the row (`.some(nil)`: none) with its `xmin`: sent with the
        /// first statement, read in its snapshot, answered once.
        var item: (lookupID: [UInt8], row: PrefetchedItem??)?
    }

    /// An item row read ahead: what ``PostgresSQL/loneRead`` returns of it.
    struct PrefetchedItem {
        let serviceTag: [UInt8]
        let nonce: [UInt8]
        let sealed: [UInt8]
        let xmin: UInt32?
    }

    /// What a write transaction keeps once it holds the lock.
    struct Write {
        /// The header row as this transaction knows it.
        var header: Header
        /// The snapshot read after the lock (`nil` when the server's text did not parse).
        let lockSnapshot: PostgresSnapshot?
        /// This session's transaction id (the lock gave it one).
        let ownTransaction: UInt64?
        /// The row ``PostgresVaultStorage/insertIfAbsent(lookupID:serviceTag:nonce:sealed:)``
        /// found in its place, for the engine's next read of it (a `set` of an existing
        /// item reads it next).
        var foundRow: StoredRow?
        /// The insert sent with the lock (``PostgresVaultStorage/writeTransaction(opening:_:)``)
        /// and what it did, until the engine asks for it.
        var openingResult: (row: StoredRow, inserted: Bool, found: StoredRow?)?
        /// The buckets whose digest rows this transaction wrote or deleted (`nil`: every
        /// bucket), and the generation it wrote with the root: the change markers its
        /// commit records (docs/FORMAT.md section 13.1).
        var changedBuckets: Set<Int>? = []
        var generationWritten: UInt64?
        /// The changed buckets listed with the lock (``PostgresVaultStorage/commitRebased(changedSince:_:)``),
        /// since `mark`, in the lock's snapshot.
        var listed: (mark: Int64, rows: [(bucket: Int64, digest: [UInt8]?)])?

        /// This transaction's id as the rows it writes carry it (`xmin`: the low 32 bits).
        var ownXmin: UInt32? { ownTransaction.map { UInt32(truncatingIfNeeded: $0) } }
    }

    /// The header row in a write transaction.
    enum Header {
        /// Not written: the row read with the lock.
        case locked(PostgresHeaderRow)
        /// Written (its columns, and the host key wraps too if `hostWraps`), so the row
        /// read with the lock is stale; the row read again since, if any.
        case written(hostWraps: Bool, reread: PostgresHeaderRow?)

        /// The row as it stands, if known.
        var row: PostgresHeaderRow? {
            switch self {
            case .locked(let row): row
            case .written(_, let reread): reread
            }
        }

        var isWritten: Bool {
            if case .written = self { return true }
            return false
        }

        var hostWrapsRewritten: Bool {
            if case .written(let hostWraps, _) = self { return hostWraps }
            return false
        }
    }

    /// Whether a transaction is open (or a prepared set's is in flight): statements are
    /// then part of it, and the session is never replaced under it.
    var inTransaction: Bool {
        if case .idle = self { return false }
        return true
    }

    /// Whether a write holds, or is taking, the lock: the snapshot version is then the lock's.
    var isWriting: Bool {
        switch self {
        case .locking, .writing, .committingPreparedSet: true
        case .idle, .reading: false
        }
    }

    /// Changes the read transaction in progress; nothing in any other state.
    mutating func updateRead(_ change: (inout Read) -> Void) {
        guard case .reading(var read) = self else { return }
        self = .idle  // the payload is then `read`'s alone: changed in place, not copied
        change(&read)
        self = .reading(read)
    }

    /// Changes the write transaction in progress; nothing in any other state.
    mutating func updateWrite(_ change: (inout Write) -> Void) {
        guard case .writing(var write) = self else { return }
        self = .idle
        change(&write)
        self = .writing(write)
    }

    /// The header row this transaction keeps, if any.
    var headerRow: PostgresHeaderRow? {
        switch self {
        case .reading(let read): read.headerRow
        case .writing(let write): write.header.row
        case .idle, .locking, .committingPreparedSet: nil
        }
    }

    /// Keeps `row`, read now, for the rest of the transaction (none is kept outside one,
    /// nor before the lock's row is in).
    mutating func keep(headerRow row: PostgresHeaderRow?) {
        switch self {
        case .reading: updateRead { $0.headerRow = row }
        case .writing:
            updateWrite { write in
                if case .written(let hostWraps, _) = write.header { write.header = .written(hostWraps: hostWraps, reread: row) }
            }
        case .idle, .locking, .committingPreparedSet: break
        }
    }

    /// The header row (and, with `hostWraps`, the wraps) written: the kept row is stale.
    mutating func headerWritten(hostWraps: Bool) {
        updateWrite { write in
            write.header = .written(hostWraps: hostWraps || write.header.hostWrapsRewritten, reread: nil)
        }
    }

    /// Forgets the row an insert found: a statement since may have changed it.
    mutating func forgetFoundRow() {
        updateWrite { $0.foundRow = nil }
    }

    /// The found row for `lookupID`, if kept, forgotten as it is returned.
    mutating func takeFoundRow(_ lookupID: [UInt8]) -> StoredRow? {
        guard case .writing(let write) = self, let found = write.foundRow, found.lookupID == lookupID else { return nil }
        updateWrite { $0.foundRow = nil }
        return found
    }

    /// The insert sent with the lock and its outcome, if it is still to be asked for,
    /// forgotten as it is returned.
    mutating func takeOpeningResult() -> (row: StoredRow, inserted: Bool, found: StoredRow?)? {
        guard case .writing(let write) = self, let early = write.openingResult else { return nil }
        updateWrite { $0.openingResult = nil }
        return early
    }
}
