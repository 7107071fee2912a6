import VaultKit

/// The item rows: a lone read, scans (whole rows, or identities in lookup id order), and
/// the writes of one row; gathered inserts are ``insertAllIfAbsent(_:)``'s.
extension PostgresVaultStorage {
    /// Outside a transaction the same statement reads the vault state and the row's
    /// `xmin`, so that ``snapshotVersion`` is the verified one only if neither changed
    /// since (the engine trusts a row read alone only then); a hot standby answers it
    /// instead when it shows exactly those (``standbyAnswer(lookupID:_:)``). Inside one, the row is
    /// confirmed unless the transaction read its bucket whole or wrote it
    /// (``PostgresRowVersions/confirmInTransaction(lookupID:xmin:)``).
    package func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        if let found = transaction.takeFoundRow(lookupID) {
            let outcome = found.serviceTag.withUnsafeBytes { serviceTag in
                found.nonce.withUnsafeBytes { nonce in
                    found.sealed.withUnsafeBytes { sealed in Swift.Result { () throws(BodyError) in try body(serviceTag, nonce, sealed) } }
                }
            }
            return try StorageFailure.passing { () throws(BodyError) in try outcome.get() }
        }
        if let prefetched = try StorageFailure<BodyError>.lift({ () throws(StorageError) in try takePrefetchedItem(lookupID) }) {
            guard let row = prefetched else { return nil }
            let outcome = row.serviceTag.withUnsafeBytes { serviceTag in
                row.nonce.withUnsafeBytes { nonce in
                    row.sealed.withUnsafeBytes { sealed in Swift.Result { () throws(BodyError) in try body(serviceTag, nonce, sealed) } }
                }
            }
            return try StorageFailure.passing { () throws(BodyError) in try outcome.get() }
        }
        // (Tested here, so a storage without a standby does no generic work for it.)
        if standby != nil, let answered = try standbyAnswer(lookupID: lookupID, body) { return answered }
        // Before the statement is sent: the state it shows was the primary's then or later.
        let sent = standby == nil ? nil : ContinuousClock.now
        return try passing(BodyError.self) {
            try connection.query(loneReadStatement, [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count == 1 else { throw StorageError.corrupted(reason: .rowStoredTwice) }
                let xmin = rows.isNull(0, 0) ? nil : PostgresRowVersions.xid(rows.text(0, 3))
                if !transaction.inTransaction {
                    _ = rowVersions.observe(Self.vaultState(rows, header: 4))
                    snapshotVersion = rowVersions.confirm(lookupID: lookupID, xmin: xmin)
                    standby?.primarySeenAt = sent
                } else {
                    lookupID.withUnsafeBytes { lookupID in
                        snapshotVersion = rowVersions.confirmInTransaction(lookupID: lookupID, xmin: xmin)
                        rowVersions.read(lookupID: lookupID, xmin: xmin)
                    }
                }
                guard !rows.isNull(0, 0) else { return nil }
                return try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(0, 0), rows.bytes(0, 1), rows.bytes(0, 2)) }
            }
        }
    }

    /// The lone read to send: without the host key wraps when the state held says the
    /// vault has none, and in a transaction (whose state its first statement names).
    var loneReadStatement: String {
        transaction.inTransaction || rowVersions.heldHeaderHasNoHostWraps ? PostgresSQL.loneReadWithoutHostWraps : PostgresSQL.loneRead
    }

    /// In a read transaction whose first statement is not sent yet, queues the read of
    /// `lookupID`'s row behind it (``PostgresTransactionState/Read/item``).
    package func prefetchItem(lookupID: [UInt8]) throws(StorageError) {
        guard case .reading(let read) = transaction, read.first == nil, read.item == nil, connection.queuedCount > 0 else { return }
        try run { () throws in
            transaction.updateRead { $0.item = (lookupID, nil) }
            // Its vault state is not used: the transaction's first statement names that.
            try connection.enqueue(PostgresSQL.loneReadWithoutHostWraps, [.text(vault), .bytes(lookupID)]) { [unowned self] rows in
                // Stored twice: not answered here, so the read runs as a statement and says so.
                guard rows.count == 1 else { return }
                let row: PostgresTransactionState.PrefetchedItem? = rows.isNull(0, 0) ? nil : .init(
                    serviceTag: rows.array(0, 0), nonce: rows.array(0, 1), sealed: rows.array(0, 2),
                    xmin: PostgresRowVersions.xid(rows.text(0, 3)))
                transaction.updateRead { read in
                    if read.item?.lookupID == lookupID { read.item?.row = .some(row) }
                }
            }
        }
    }

    /// The row read ahead for `lookupID` in this read transaction (`.some(nil)`: none),
    /// once; `nil` when none was (then the caller reads it). Confirmed and recorded as
    /// the transaction's read of it, as a statement's would be: the engine trusts it in a
    /// bucket it did not read whole only if the row versions held vouch for it.
    private func takePrefetchedItem(_ lookupID: [UInt8]) throws(StorageError) -> PostgresTransactionState.PrefetchedItem?? {
        guard case .reading(let read) = transaction, let asked = read.item, asked.lookupID == lookupID else { return nil }
        if asked.row == nil, connection.queuedCount > 0 { try run { () throws in try connection.flush() } }
        guard case .reading(let answered) = transaction, let row = answered.item?.row else { return nil }
        transaction.updateRead { $0.item = nil }
        lookupID.withUnsafeBytes { lookupID in
            snapshotVersion = rowVersions.confirmInTransaction(lookupID: lookupID, xmin: row?.xmin)
            rowVersions.read(lookupID: lookupID, xmin: row?.xmin)
        }
        return .some(row)
    }

    package func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let (sql, parameters): (String, [PostgresConnection.Parameter]) = if let serviceTag {
            (PostgresSQL.wholeRows + PostgresSQL.ofService, [.text(vault), .bytes(serviceTag)])
        } else {
            (PostgresSQL.wholeRows, [.text(vault)])
        }
        try forEachStoredRow(sql, parameters, whole: serviceTag == nil ? .some(nil) : nil, body)
    }

    /// A bucket's rows, whole, in lookup id order (what a prepared `set` keeps).
    package func forEachRow<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?), _ body: (StoredRow) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let (sql, parameters) = inLookupIDOrder(PostgresSQL.wholeRows, range)
        try forEachStoredRow(sql, parameters, whole: .some(range), body)
    }

    /// Runs `sql`, which selects ``PostgresSQL/wholeRows``' columns, and calls `body` with each row.
    /// - Parameter whole: the lookup id range it reads whole (`.some(nil)`: all rows), if any.
    private func forEachStoredRow<BodyError: Error>(
        _ sql: String, _ parameters: [PostgresConnection.Parameter], whole: (lower: [UInt8], upper: [UInt8]?)??,
        _ body: (StoredRow) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                let inTransaction = transaction.inTransaction
                for row in 0..<rows.count {
                    let stored = StoredRow(lookupID: rows.array(row, 0), serviceTag: rows.array(row, 1), nonce: rows.array(row, 2), sealed: rows.array(row, 3))
                    try StorageFailure.passing { () throws(BodyError) in try body(stored) }
                    if inTransaction { rowVersions.read(lookupID: rows.bytes(row, 0), xmin: PostgresRowVersions.xid(rows.text(row, 4))) }
                }
                if inTransaction, let whole { rowVersions.readWhole(whole) }
            }
        }
    }

    /// In lookup id order: `bytea` compares as `memcmp`, then length, as the seam requires.
    package func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let (sql, parameters) = inLookupIDOrder(PostgresSQL.rowIdentities, range)
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                let inTransaction = transaction.inTransaction
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(row, 0), rows.bytes(row, 1), rows.bytes(row, 2)) }
                    if inTransaction { rowVersions.read(lookupID: rows.bytes(row, 0), xmin: PostgresRowVersions.xid(rows.text(row, 3))) }
                }
                if inTransaction { rowVersions.readWhole(range) }
            }
        }
    }

    /// `select` (whose only parameter is the vault, `$1`) limited to `range` of lookup ids
    /// (`nil`: all) and ordered by lookup id.
    private func inLookupIDOrder(
        _ select: String, _ range: (lower: [UInt8], upper: [UInt8]?)?
    ) -> (sql: String, parameters: [PostgresConnection.Parameter]) {
        var sql = select
        var parameters: [PostgresConnection.Parameter] = [.text(vault)]
        if let range {
            sql += PostgresSQL.fromLookupID
            parameters.append(.bytes(range.lower))
            if let upper = range.upper {
                sql += PostgresSQL.belowLookupID
                parameters.append(.bytes(upper))
            }
        }
        return (sql + PostgresSQL.inLookupIDOrder, parameters)
    }

    package func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        transaction.forgetFoundRow()
        rowVersions.wrote(lookupID: lookupID)
        try write(PostgresSQL.upsertItem, [.text(vault), .bytes(lookupID), .bytes(serviceTag), .bytes(Array(nonce)), .bytes(sealed)])
    }

    /// One statement inserts the row or, when one is in its place, returns that one, which
    /// the engine reads next to replace it: a `set` of an existing item saves a round trip.
    package func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        transaction.forgetFoundRow()
        let (inserted, found, xmin) = try insertOrFind(StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array(nonce), sealed: sealed))
        if let found {
            confirmUnderLock(found, xmin: xmin)
            transaction.updateWrite { $0.foundRow = found }
        }
        return inserted
    }

    /// Inserts `row` unless one is in its place, and returns that one, as the statement's
    /// snapshot (taken before the insert) shows it; `nil` also when the snapshot shows none
    /// or two (a read of a row stored twice must see both); with the found row's `xmin`,
    /// for the caller to confirm under the lock (``confirmUnderLock(_:xmin:)``).
    func insertOrFind(_ row: StoredRow) throws(StorageError) -> (inserted: Bool, found: StoredRow?, xmin: UInt32?) {
        try run { () throws in
            try connection.query(PostgresSQL.insertOrFindItem, [.text(vault), .bytes(row.lookupID), .bytes(row.serviceTag), .bytes(row.nonce), .bytes(row.sealed)]) { rows in
                let inserted = rows.count > 0 && rows.int64(0, 0) == 1
                if inserted { rowVersions.wrote(lookupID: row.lookupID) }
                guard !inserted, rows.count == 1, !rows.isNull(0, 1) else { return (inserted, nil, nil) }
                return (false, StoredRow(lookupID: row.lookupID, serviceTag: rows.array(0, 1), nonce: rows.array(0, 2), sealed: rows.array(0, 3)),
                        PostgresRowVersions.xid(rows.text(0, 4)))
            }
        }
    }

    package func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        transaction.forgetFoundRow()
        let deleted = try run { () throws in
            try connection.query(PostgresSQL.deleteItem, [.text(vault), .bytes(lookupID)]) { rows in
                rows.count > 0 ? (rows.array(0, 0), rows.array(0, 1), PostgresRowVersions.xid(rows.text(0, 2))) : nil
            }
        }
        // The row deleted is the one verified (before this transaction's own write counts).
        if transaction.isWriting {
            lookupID.withUnsafeBytes { snapshotVersion = rowVersions.confirmInTransaction(lookupID: $0, xmin: deleted?.2) }
        }
        rowVersions.wrote(lookupID: lookupID, deleted: true)
        return deleted.map { ($0.0, $0.1) }
    }

    package func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        transaction.forgetFoundRow()
        rowVersions.forgetRows()
        let (sql, parameters): (String, [PostgresConnection.Parameter]) = if let serviceTag {
            (PostgresSQL.deleteItemsOfService, [.text(vault), .bytes(serviceTag)])
        } else {
            (PostgresSQL.deleteAllItems, [.text(vault)])
        }
        return try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(row, 0), rows.bytes(row, 1), rows.bytes(row, 2)) }
                }
                return rows.count
            }
        }
    }
}

extension PostgresVaultStorage {
    /// A row found in an item's place under the write lock, which the engine is about to
    /// build on: unless it is the row verified, the snapshot version moves on and the
    /// engine verifies its bucket again (``PostgresRowVersions/confirmInTransaction(lookupID:xmin:)``).
    func confirmUnderLock(_ row: StoredRow, xmin: UInt32?) {
        row.lookupID.withUnsafeBytes { snapshotVersion = rowVersions.confirmInTransaction(lookupID: $0, xmin: xmin) }
    }
}
