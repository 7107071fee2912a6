import VaultKit

/// Write and read transactions, and the snapshot version they report: every change of
/// ``PostgresVaultStorage/transaction`` outside a prepared set's commit is here.
extension PostgresVaultStorage {
    /// Locks this vault's header row before the body reads anything, so a read-then-write
    /// cannot race another writer on any connection; commits, or rolls back if `body` throws.
    package func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        try writeTransaction(beginning: nil, body)
    }

    package func writeTransaction<Result, BodyError: Error>(
        opening: OpeningInsert, _ body: () throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result {
        try writeTransaction(beginning: opening, body)
    }

    /// A write transaction, with `opening`'s insert (if any) in the lock's round trip:
    /// BEGIN, the lock, the header row, then the insert (its own statement, so it sees
    /// every commit before the lock). Kept only if the header row shows the snapshot
    /// version and key check the engine sealed the row for; else the row it inserted is
    /// deleted again before `body` reads anything (no round trip of its own).
    private func writeTransaction<Result, BodyError: Error>(
        beginning opening: OpeningInsert?, _ body: () throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result {
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in
                transaction = .locking
                writeTransactionsBegun += 1
                manifestMarkOfLastCommit = nil
                do {
                    try beginWrite(opening: opening)
                } catch {
                    endTransaction(committing: false)
                    throw error
                }
            }
        }
        do {
            let result = try StorageFailure<BodyError>.passing(body)
            let (write, barrier) = try StorageFailure<BodyError>.lift { () throws(StorageError) -> (PostgresTransactionState.Write, UInt64?) in
                // The body did not ask for the insert sent early: committing it would
                // store a row without its manifest term.
                guard case .writing(let write) = transaction, write.openingResult == nil else {
                    throw .corrupted(reason: .unexpectedStorageError)
                }
                // The lock is released as the server commits; the call returns once the
                // commit is durable (the barrier behind it).
                let barrier = try run { () throws in
                    try enqueueChangeMarkers(write.changedBuckets, generation: write.generationWritten)
                    try connection.enqueueAsynchronousCommit()
                    try connection.enqueue(PostgresSQL.commit)
                    return try connection.flushCommitting()
                }
                return (write, barrier)
            }
            manifestCache.carry(to: versionAfterOwnCommit(lockSnapshot: write.lockSnapshot, ownTransaction: write.ownTransaction, barrier: barrier))
            manifestMarkOfLastCommit = markOfOwnCommit(generation: write.generationWritten, ownXmin: write.ownXmin)
            snapshotVersion = rowVersions.committed(own: write.ownXmin, wroteHeader: write.header.isWritten, derivable: !write.header.hostWrapsRewritten)
            endTransaction(committing: true)
            return result
        } catch {
            endTransaction(committing: false)
            throw error
        }
    }

    /// Takes the write lock and reads the header row (kept for the transaction), with
    /// `opening`'s insert if it still holds, in one round trip.
    private func beginWrite(opening: OpeningInsert?) throws {
        // The header row is a statement of its own, after the lock, so its snapshot is
        // taken once the lock is held: every earlier writer's commit is in it.
        try connection.enqueue(PostgresSQL.beginWrite)
        try connection.enqueue(PostgresSQL.lockHeader, [.text(vault)])
        if let opening {
            // `.some(nil)`: read, and the vault has no header row.
            var read: PostgresHeaderRow??
            try connection.enqueue(PostgresSQL.headerRow, [.text(vault)]) { read = .some(PostgresHeaderRow($0)) }
            let outcome: (inserted: Bool, found: StoredRow?, xmin: UInt32?)
            do {
                outcome = try insertOrFind(opening.row)
            } catch {
                // The vault is gone (the insert failed on its reference to the header).
                if case .some(nil) = read { throw StorageError.notFound(location: location) }
                throw error
            }
            guard case .some(let row?) = read else { throw StorageError.notFound(location: location) }
            useLock(row)
            if snapshotVersion == opening.snapshotVersion, row.masterKeyCheck == opening.keyCheck {
                transaction.updateWrite { $0.openingResult = (opening.row, outcome.inserted, outcome.found) }
                if let found = outcome.found { confirmUnderLock(found, xmin: outcome.xmin) }
            } else if outcome.inserted {
                // Another session committed since the engine sealed the row: the row is
                // deleted again, with the body's first statement (so before anything it
                // reads); the lock and the header row stand. A row found in place was not
                // touched.
                try connection.enqueue(PostgresSQL.deleteItem, [.text(vault), .bytes(opening.row.lookupID)])
            }
            return
        }
        guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
        useLock(row)
    }

    /// Holds the lock: keeps the header row read after it, its snapshot, the transaction
    /// id and the vault state.
    func useLock(_ row: PostgresHeaderRow) {
        transaction = .writing(.init(header: .locked(row), lockSnapshot: PostgresSnapshot(row.snapshot), ownTransaction: row.ownTransaction))
        manifestCache.use(version(ofSnapshot: row.snapshot, ownTransaction: row.ownTransaction))
        snapshotVersion = rowVersions.observe(row.vaultState)
        rowVersions.readsBelong(to: snapshotVersion)
    }

    /// The version to report after this writer's commit: the lock's snapshot with this
    /// transaction and the durability barrier after it (`barrier`, if any) completed.
    /// Without that (no id, or too many ids running between), a version no snapshot has,
    /// so the engine checks the next snapshot afresh.
    func versionAfterOwnCommit(lockSnapshot: PostgresSnapshot?, ownTransaction: UInt64?, barrier: UInt64?) -> Int64 {
        if let ownTransaction, let version = lockSnapshot?.version(completing: [ownTransaction] + (barrier.map { [$0] } ?? [])) { return version }
        ownCommitVersion -= 1
        return ownCommitVersion
    }

    /// Ends the transaction in progress: forgets what it kept, and rolls back unless it
    /// committed (the unsent writes are dropped: the rollback undoes what was sent).
    /// - Parameter rollingBack: whether a transaction may be open on the server (not
    ///   after a prepared set, whose implicit transaction ended at its sync point).
    func endTransaction(committing: Bool, rollingBack: Bool = true) {
        if !committing {
            connection.discardQueued()
            if rollingBack { try? connection.execute(PostgresSQL.rollback) }
            if transaction.isWriting { manifestCache.forget() }
        }
        rowVersions.discardTransaction()
        transaction = .idle
    }

    /// Runs `body` in one REPEATABLE READ snapshot; inside a write transaction, in that one.
    package func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if transaction.inTransaction { return try StorageFailure<BodyError>.passing(body) }
        // Sent with the body's first statement; a body that reads nothing costs no round trip.
        // So is the snapshot's name (the first statement fixes the snapshot), which
        // ``pinSnapshot()`` then answers without a round trip of its own.
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in
                try connection.enqueue(PostgresSQL.beginRead)
                // The header row too: a read that verifies the root reads it next.
                try connection.enqueue(PostgresSQL.readTransactionFirst, [.text(vault)]) { [unowned self] rows in
                    let header = PostgresHeaderRow(rows)
                    let state = header?.vaultState ?? .init(header: nil, hostWraps: nil, hasHostWraps: false)
                    transaction.updateRead {
                        $0.first = (snapshot: rows.text(0, 0), state: state)
                        $0.headerRow = header
                    }
                }
            }
        }
        transaction = .reading(.init())
        defer {
            // Still queued: nothing was sent, so there is no transaction to end. Else the
            // COMMIT of what only read goes without waiting for its answer.
            if connection.queuedCount > 0 { connection.discardQueued() } else { try? connection.sendWithoutWaiting(PostgresSQL.commit) }
            rowVersions.endRead()
            endTransaction(committing: true)
        }
        return try StorageFailure<BodyError>.passing(body)
    }

    /// In a write transaction the version stays the lock's: no writer of the engine can
    /// change the vault while it is held.
    package func pinSnapshot() throws(StorageError) {
        if transaction.isWriting { return }
        try run { () throws in
            if case .reading(var read) = transaction {
                // The read transaction's own snapshot and vault state, named by its first statement.
                if read.first == nil {
                    try connection.flush()
                    guard case .reading(let answered) = transaction else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                    read = answered
                }
                guard let (snapshot, state) = read.first else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                snapshotVersion = rowVersions.observe(state)
                rowVersions.readsBelong(to: snapshotVersion)
                // What it reads is that snapshot's.
                manifestCache.use(version(ofSnapshot: snapshot, ownTransaction: nil))
                transaction.updateRead { $0.pinned = true }
            } else {
                let state = try connection.query(PostgresSQL.vaultState, [.text(vault)]) { Self.vaultState($0, header: 1) }
                snapshotVersion = rowVersions.observe(state)
            }
        }
    }

    /// The vault state in `rows`' first row (none: no header): the header's `xmin` in
    /// column `header`, then the wraps' `xmin`s (``PostgresSQL/hostWrapsXmin``) and the
    /// header's flag (``PostgresSQL/hasHostWraps``).
    static func vaultState(_ rows: PostgresRows, header: Int) -> PostgresRowVersions.VaultState {
        guard rows.count > 0 else { return .init(header: nil, hostWraps: nil, hasHostWraps: false) }
        return .init(header: rows.isNull(0, header) ? nil : PostgresRowVersions.xid(rows.text(0, header)),
                     hostWraps: rows.isNull(0, header + 1) ? nil : rows.text(0, header + 1),
                     hasHostWraps: rows.int64(0, header + 2) != 0)
    }

    /// The version of a snapshot this session read, its own transaction (if writing)
    /// counted as running.
    func version(ofSnapshot text: String, ownTransaction: UInt64?) -> Int64 {
        PostgresSnapshot(text)?.version(ownTransaction: ownTransaction) ?? PostgresSnapshot.version(ofText: text)
    }
}
