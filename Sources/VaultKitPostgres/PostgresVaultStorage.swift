#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

/// A vault in a PostgreSQL database: the second ``VaultStorage`` beside the SQLite file,
/// the same opaque rows in the tables of ``PostgresSchema``.
///
/// - Writes: `BEGIN` (READ COMMITTED), then the header row is locked `FOR UPDATE`
///   before anything is read, so writers on any number of connections and hosts run one
///   at a time, each seeing every earlier commit; a lock wait longer than the busy
///   timeout is ``StorageError/busy(location:)``. Commits are durable (`synchronous_commit`
///   is set on per session).
/// - Reads: one REPEATABLE READ, READ ONLY transaction, so a multi-row read sees one snapshot.
/// - ``snapshotVersion``: names this vault's state by row versions (``PostgresRowVersions``):
///   the header row's and host key wraps' `xmin`, read after the write lock, by
///   ``pinSnapshot()`` and with a lone item read, which also compares its row's `xmin`
///   with the one verified. It changes when this vault's header changes (every write of
///   the engine updates it) and when a lone read finds its row changed, put back, added
///   or gone without the header (an attacker's SQL), not when another table or vault
///   commits. After its own commit a writer reports the state it wrote (the header's new
///   `xmin` is its own transaction's), so what the engine verified survives its own writes.
/// - The manifest digests kept for writes (``PostgresManifestCache``) stay tied to the
///   cluster's snapshot (``PostgresSnapshot``): any commit anywhere makes a writer read
///   them again.
/// - Round trips (``PostgresConnection``): `BEGIN`, the lock and the header row
///   (``PostgresHeaderRow``, kept for the transaction) travel together; writes whose
///   results the engine does not need wait and travel with the next statement, the last
///   ones with `COMMIT`. A lone `set` the engine prepared whole travels with all of them
///   in one (``commit(_:)``). A batch's `set`s arrive together (``GatheringInsertStorage``), up
///   to 1,000 rows per statement. The steady-state statements per operation are listed
///   in Benchmarks/README.md, "PostgreSQL".
package final class PostgresVaultStorage: RoundTripSavingStorage {
    package let location: String
    private let vault: String
    /// Where the vault is, for connections besides ``connection`` (``sharedLock(named:)``).
    private let postgresLocation: PostgresVaultLocation
    /// Internal, not private: the tests read the session settings through it. Replaced
    /// by a new session when the server ended this one (``reconnectIfEnded()``).
    private(set) var connection: PostgresConnection
    private let lockTimeoutMilliseconds: Int
    private var inTransaction = false
    package private(set) var snapshotVersion: Int64 = -1
    /// The header row read in the transaction in progress, until it ends or writes the header.
    private var headerRow: PostgresHeaderRow?
    /// In a write transaction: the snapshot read after the lock, and this session's
    /// transaction id (the lock gave it one).
    private var lockSnapshot: PostgresSnapshot?
    private var ownTransaction: UInt64?
    private var writing = false
    /// Manifest digests known for a snapshot version: used in a write transaction, and in
    /// a read transaction once ``pinSnapshot()`` has named its snapshot.
    private var manifestCache = PostgresManifestCache()
    private var manifestCacheUsable = false
    /// The row ``insertIfAbsent(lookupID:serviceTag:nonce:sealed:)`` found in its place,
    /// for the engine's next read of it (a `set` of an existing item reads it next).
    private var foundRow: (lookupID: [UInt8], serviceTag: [UInt8], nonce: [UInt8], sealed: [UInt8])?
    /// The snapshot of the read transaction in progress, once its first statement ran.
    private var readSnapshot: String?
    /// The insert sent with the lock (``writeTransaction(opening:_:)``) and what it did,
    /// until the engine asks for it.
    private var openingResult: (row: StoredRow, inserted: Bool, found: StoredRow?)?
    /// Versions handed out after own commits: negative, never a snapshot's (those are >= 0).
    private var ownCommitVersion: Int64 = -1
    /// The vault's state and the row versions verified under ``snapshotVersion``.
    private var rowVersions = PostgresRowVersions()
    /// The vault state the read transaction in progress saw with its first statement.
    private var readState: PostgresRowVersions.VaultState?
    /// In a write transaction: it wrote the header row, or rewrote the host key wraps.
    private var headerWritten = false
    private var hostWrapsRewritten = false

    package init(_ location: PostgresVaultLocation, lockTimeoutMilliseconds: Int) throws(StorageError) {
        self.location = location.description
        vault = location.vaultName
        postgresLocation = location
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        do {
            connection = try PostgresConnection(conninfo: location.conninfo, password: location.password, lockTimeoutMilliseconds: lockTimeoutMilliseconds)
        } catch {
            throw Self.translate(error, location: location.description)
        }
    }

    // MARK: Creating and checking

    package func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        try run { () throws in
            try connection.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.creationLock)); " + PostgresSchema.all.joined(separator: "; "))
            do {
                let inserted = try connection.change("""
                    INSERT INTO vaultkit_header (vault, format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit,
                        master_key_nonce, wrapped_master_key, master_key_check, manifest_root, manifest_tag, generation)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0)
                    ON CONFLICT (vault) DO NOTHING
                    """, [.text(vault), .int64(Int64(header.formatVersion)), .bytes(header.vaultID)] + Self.keyWrapping(header)
                        + [.bytes(ManifestDigest.zero.bytes), .bytes(manifestTag.bytes)])
                guard inserted == 1 else { throw StorageError.alreadyExists(location: location) }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// The key wrapping columns `kdf_algorithm` .. `master_key_check`, as parameters.
    private static func keyWrapping(_ header: VaultHeader) -> [PostgresConnection.Parameter] {
        let kdf: [PostgresConnection.Parameter] = switch header.keySource {
        case .passphrase(let salt, let parameters):
            [.text("argon2id13"), .bytes(salt), .int64(Int64(parameters.opsLimit)), .int64(Int64(parameters.memoryLimit))]
        case .rawKey:
            [.text("raw"), .nullBytes, .nullInt64, .nullInt64]
        }
        return kdf + [.bytes(header.masterKeyNonce), .bytes(header.wrappedMasterKey), .bytes(header.masterKeyCheck)]
    }

    /// Checks that the database holds exactly the tables, columns and keys of
    /// ``PostgresSchema`` and no trigger or rule on them: a trigger could change what a
    /// statement does, a missing key could let one lookup id be stored twice.
    package func checkSchema(formatVersion: Int) throws(StorageError) {
        guard formatVersion == VaultHeader.currentFormatVersion else { throw .schemaChanged }
        try run { () throws in
            let columns = try connection.query("""
                SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
                FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name IN \(PostgresSchema.tableList)
                """) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
            let keys = try connection.query("""
                SELECT c.relname || ':' || string_agg(a.attname, ',' ORDER BY k.ordinality)
                FROM pg_constraint p
                JOIN pg_class c ON c.oid = p.conrelid
                CROSS JOIN LATERAL unnest(p.conkey) WITH ORDINALITY AS k(attnum, ordinality)
                JOIN pg_attribute a ON a.attrelid = p.conrelid AND a.attnum = k.attnum
                WHERE p.contype = 'p' AND c.relnamespace = current_schema()::regnamespace
                  AND c.relname IN \(PostgresSchema.tableList)
                GROUP BY c.relname, p.oid
                """) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
            let hooks = try connection.query("""
                SELECT (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                        WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
                          AND c.relname IN \(PostgresSchema.tableList))
                     + (SELECT count(*) FROM pg_rules WHERE schemaname = current_schema()
                          AND tablename IN \(PostgresSchema.tableList))
                """) { rows in rows.int64(0, 0) }
            guard columns == PostgresSchema.expectedColumns, keys == PostgresSchema.expectedPrimaryKeys, hooks == 0 else {
                throw StorageError.schemaChanged
            }
        }
    }

    // MARK: Transactions

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
                inTransaction = true
                writing = true
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
            try StorageFailure<BodyError>.lift { () throws(StorageError) in
                // The body did not ask for the insert sent early: committing it would
                // store a row without its manifest term.
                guard openingResult == nil else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                try run { () throws in
                    try connection.enqueue("COMMIT")
                    try connection.flush()
                }
            }
            manifestCache.carry(to: versionAfterOwnCommit())
            snapshotVersion = rowVersions.committed(own: ownXmin, wroteHeader: headerWritten, derivable: !hostWrapsRewritten)
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
        try connection.enqueue("BEGIN ISOLATION LEVEL READ COMMITTED")
        try connection.enqueue("SELECT 1 FROM vaultkit_header WHERE vault = $1 FOR UPDATE", [.text(vault)])
        if let opening {
            // `.some(nil)`: read, and the vault has no header row.
            var read: PostgresHeaderRow??
            try connection.enqueue(PostgresHeaderRow.sql, [.text(vault)]) { read = .some(PostgresHeaderRow($0)) }
            let outcome: (inserted: Bool, found: StoredRow?)
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
                openingResult = (opening.row, outcome.inserted, outcome.found)
            } else if outcome.inserted {
                // Another session committed since the engine sealed the row: the row is
                // deleted again, with the body's first statement (so before anything it
                // reads); the lock and the header row stand. A row found in place was not
                // touched.
                try connection.enqueue(Self.deleteSQL, [.text(vault), .bytes(opening.row.lookupID)])
            }
            return
        }
        guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
        useLock(row)
    }

    /// Takes the snapshot, transaction id and vault state of the header row read after the lock.
    private func useLock(_ row: PostgresHeaderRow) {
        headerRow = row
        lockSnapshot = PostgresSnapshot(row.snapshot)
        ownTransaction = row.ownTransaction
        manifestCache.use(version(ofSnapshot: row.snapshot))
        manifestCacheUsable = true
        snapshotVersion = rowVersions.observe(row.vaultState)
        rowVersions.readsBelong(to: snapshotVersion)
    }

    /// This transaction's id as the rows it writes carry it (`xmin`: the low 32 bits).
    private var ownXmin: UInt32? { ownTransaction.map { UInt32(truncatingIfNeeded: $0) } }

    /// The version to report after this writer's commit: the lock's snapshot with this
    /// transaction completed. Without that (no id, or too many ids running between), a
    /// version no snapshot has, so the engine checks the next snapshot afresh.
    private func versionAfterOwnCommit() -> Int64 {
        if let ownTransaction, let version = lockSnapshot?.version(completing: ownTransaction) { return version }
        ownCommitVersion -= 1
        return ownCommitVersion
    }

    /// Ends the transaction in progress: forgets what it kept, and rolls back unless it
    /// committed (the unsent writes are dropped: the rollback undoes what was sent).
    /// - Parameter rollingBack: whether a transaction may be open on the server (not
    ///   after a prepared set, whose implicit transaction ended at its sync point).
    private func endTransaction(committing: Bool, rollingBack: Bool = true) {
        if !committing {
            connection.discardQueued()
            if rollingBack { try? connection.execute("ROLLBACK") }
            if writing { manifestCache.forget() }
        }
        rowVersions.discardTransaction()
        readState = nil
        headerWritten = false
        hostWrapsRewritten = false
        inTransaction = false
        writing = false
        manifestCacheUsable = false
        headerRow = nil
        lockSnapshot = nil
        ownTransaction = nil
        foundRow = nil
        openingResult = nil
        readSnapshot = nil
    }

    /// Runs `body` in one REPEATABLE READ snapshot; inside a write transaction, in that one.
    package func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if inTransaction { return try StorageFailure<BodyError>.passing(body) }
        // Sent with the body's first statement; a body that reads nothing costs no round trip.
        // So is the snapshot's name (the first statement fixes the snapshot), which
        // ``pinSnapshot()`` then answers without a round trip of its own.
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in
                try connection.enqueue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try connection.enqueue(Self.stateSQL, [.text(vault)]) { [unowned self] rows in
                    readSnapshot = rows.text(0, 0)
                    readState = Self.vaultState(rows, header: 1, hostWraps: 2)
                }
            }
        }
        inTransaction = true
        defer {
            // Still queued: nothing was sent, so there is no transaction to end. Else the
            // COMMIT of what only read goes without waiting for its answer.
            if connection.queuedCount > 0 { connection.discardQueued() } else { try? connection.sendWithoutWaiting("COMMIT") }
            rowVersions.endRead()
            endTransaction(committing: true)
        }
        return try StorageFailure<BodyError>.passing(body)
    }

    /// In a write transaction the version stays the lock's: no writer of the engine can
    /// change the vault while it is held.
    package func pinSnapshot() throws(StorageError) {
        if writing { return }
        try run { () throws in
            if inTransaction {
                // The read transaction's own snapshot and vault state, named by its first statement.
                if readSnapshot == nil { try connection.flush() }
                guard let snapshot = readSnapshot, let state = readState else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                snapshotVersion = rowVersions.observe(state)
                rowVersions.readsBelong(to: snapshotVersion)
                // What it reads is that snapshot's.
                manifestCache.use(version(ofSnapshot: snapshot))
                manifestCacheUsable = true
            } else {
                let state = try connection.query(Self.stateSQL, [.text(vault)]) { Self.vaultState($0, header: 1, hostWraps: 2) }
                snapshotVersion = rowVersions.observe(state)
            }
        }
    }

    /// The snapshot, the header row's `xmin` (NULL: no header) and the host key wraps'.
    private static let stateSQL = """
        SELECT pg_current_snapshot()::text, h.xmin::text, \(hostWrapsXminSQL)
        FROM (SELECT 1) AS one LEFT JOIN vaultkit_header h ON h.vault = $1
        """

    /// The host key wraps' `xmin`s of vault `$1`, ascending and comma-separated; NULL for none.
    static let hostWrapsXminSQL = "(SELECT string_agg(w.xmin::text, ',' ORDER BY w.xmin::text::bigint) FROM vaultkit_host_wraps w WHERE w.vault = $1)"

    private static func vaultState(_ rows: PostgresRows, header: Int, hostWraps: Int) -> PostgresRowVersions.VaultState {
        guard rows.count > 0 else { return .init(header: nil, hostWraps: nil) }
        return .init(header: rows.isNull(0, header) ? nil : PostgresRowVersions.xid(rows.text(0, header)),
                     hostWraps: rows.isNull(0, hostWraps) ? nil : rows.text(0, hostWraps))
    }

    /// The version of a snapshot this session read, its own transaction (if writing)
    /// counted as running.
    private func version(ofSnapshot text: String) -> Int64 {
        PostgresSnapshot(text)?.version(ownTransaction: ownTransaction) ?? PostgresSnapshot.version(ofText: text)
    }


    // MARK: Header

    package func readHeader() throws(StorageError) -> VaultHeader {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return try row.header()
        }
    }

    package func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return row.masterKeyCheck
        }
    }

    /// The header row: the one this transaction read, else read now (and kept, in a transaction).
    private func currentHeaderRow() throws -> PostgresHeaderRow? {
        if inTransaction, let headerRow { return headerRow }
        let row = try connection.query(PostgresHeaderRow.sql, [.text(vault)]) { PostgresHeaderRow($0) }
        if inTransaction { headerRow = row }
        return row
    }

    package func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        try write(changingHeader: true, """
            UPDATE vaultkit_header SET kdf_algorithm = $2, kdf_salt = $3, kdf_opslimit = $4, kdf_memlimit = $5,
                master_key_nonce = $6, wrapped_master_key = $7, master_key_check = $8
            WHERE vault = $1
            """, [.text(vault)] + Self.keyWrapping(header))
    }

    package func setFormatVersion(_ version: Int) throws(StorageError) {
        try write(changingHeader: true, "UPDATE vaultkit_header SET format_version = $2 WHERE vault = $1", [.text(vault), .int64(Int64(version))])
    }

    // MARK: Items

    /// Outside a transaction the same statement reads the vault state and the row's
    /// `xmin`, so that ``snapshotVersion`` is the verified one only if neither changed
    /// since (the engine trusts a row read alone only then).
    package func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        if inTransaction, let found = foundRow, found.lookupID == lookupID {
            foundRow = nil
            let outcome = found.serviceTag.withUnsafeBytes { serviceTag in
                found.nonce.withUnsafeBytes { nonce in
                    found.sealed.withUnsafeBytes { sealed in Swift.Result { () throws(BodyError) in try body(serviceTag, nonce, sealed) } }
                }
            }
            return try StorageFailure.passing { () throws(BodyError) in try outcome.get() }
        }
        return try passing(BodyError.self) {
            try connection.query(Self.loneReadSQL, [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count == 1 else { throw StorageError.corrupted(reason: .rowStoredTwice) }
                let xmin = rows.isNull(0, 0) ? nil : PostgresRowVersions.xid(rows.text(0, 3))
                if !inTransaction {
                    _ = rowVersions.observe(Self.vaultState(rows, header: 4, hostWraps: 5))
                    snapshotVersion = rowVersions.confirm(lookupID: lookupID, xmin: xmin)
                } else if xmin != nil {
                    lookupID.withUnsafeBytes { rowVersions.read(lookupID: $0, xmin: xmin) }
                }
                guard !rows.isNull(0, 0) else { return nil }
                return try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(0, 0), rows.bytes(0, 1), rows.bytes(0, 2)) }
            }
        }
    }

    /// One item's row with its `xmin`, and the vault state, in one statement.
    private static let loneReadSQL = """
        SELECT i.service_tag, i.nonce, i.sealed, i.xmin::text, h.xmin::text, \(hostWrapsXminSQL)
        FROM (SELECT 1) AS one
        LEFT JOIN vaultkit_header h ON h.vault = $1
        LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
        """

    private static let wholeRows = "SELECT lookup_id, service_tag, nonce, sealed, xmin::text FROM vaultkit_items WHERE vault = $1"

    package func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let (sql, parameters): (String, [PostgresConnection.Parameter]) = if let serviceTag {
            (Self.wholeRows + " AND service_tag = $2", [.text(vault), .bytes(serviceTag)])
        } else {
            (Self.wholeRows, [.text(vault)])
        }
        try forEachStoredRow(sql, parameters, whole: serviceTag == nil ? .some(nil) : nil, body)
    }

    /// Runs `sql`, which selects ``wholeRows``' columns, and calls `body` with each row.
    /// - Parameter whole: the lookup id range it reads whole (`.some(nil)`: all rows), if any.
    private func forEachStoredRow<BodyError: Error>(
        _ sql: String, _ parameters: [PostgresConnection.Parameter], whole: (lower: [UInt8], upper: [UInt8]?)??,
        _ body: (StoredRow) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
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
        let (sql, parameters) = inLookupIDOrder("SELECT lookup_id, service_tag, nonce, xmin::text FROM vaultkit_items WHERE vault = $1", range)
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(row, 0), rows.bytes(row, 1), rows.bytes(row, 2)) }
                    if inTransaction { rowVersions.read(lookupID: rows.bytes(row, 0), xmin: PostgresRowVersions.xid(rows.text(row, 3))) }
                }
                if inTransaction { rowVersions.readWhole(range) }
            }
        }
    }

    package func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        foundRow = nil
        rowVersions.wrote(lookupID: lookupID)
        try write("""
            INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (vault, lookup_id) DO UPDATE SET service_tag = EXCLUDED.service_tag, nonce = EXCLUDED.nonce, sealed = EXCLUDED.sealed
            """, [.text(vault), .bytes(lookupID), .bytes(serviceTag), .bytes(Array(nonce)), .bytes(sealed)])
    }

    /// One statement inserts the row or, when one is in its place, returns that one, which
    /// the engine reads next to replace it: a `set` of an existing item saves a round trip.
    package func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        foundRow = nil
        let (inserted, found) = try insertOrFind(StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array(nonce), sealed: sealed))
        if inTransaction, let found { foundRow = (found.lookupID, found.serviceTag, found.nonce, found.sealed) }
        return inserted
    }

    /// Inserts `row` unless one is in its place, and returns that one, as the statement's
    /// snapshot (taken before the insert) shows it; `nil` also when the snapshot shows none
    /// or two (a read of a row stored twice must see both).
    private func insertOrFind(_ row: StoredRow) throws(StorageError) -> (inserted: Bool, found: StoredRow?) {
        try run { () throws in
            try connection.query("""
                WITH inserted AS (
                    INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (vault, lookup_id) DO NOTHING RETURNING 1
                )
                SELECT (SELECT count(*) FROM inserted), i.service_tag, i.nonce, i.sealed
                FROM (SELECT 1) AS one LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
                """, [.text(vault), .bytes(row.lookupID), .bytes(row.serviceTag), .bytes(row.nonce), .bytes(row.sealed)]) { rows in
                let inserted = rows.count > 0 && rows.int64(0, 0) == 1
                if inserted { rowVersions.wrote(lookupID: row.lookupID) }
                guard !inserted, rows.count == 1, !rows.isNull(0, 1) else { return (inserted, nil) }
                return (false, StoredRow(lookupID: row.lookupID, serviceTag: rows.array(0, 1), nonce: rows.array(0, 2), sealed: rows.array(0, 3)))
            }
        }
    }

    // MARK: Prepared sets

    /// A bucket's rows, whole, in lookup id order.
    package func forEachRow<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?), _ body: (StoredRow) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let (sql, parameters) = inLookupIDOrder(Self.wholeRows, range)
        try forEachStoredRow(sql, parameters, whole: .some(range), body)
    }

    /// `select` (whose only parameter is the vault, `$1`) limited to `range` of lookup ids
    /// (`nil`: all) and ordered by lookup id.
    private func inLookupIDOrder(
        _ select: String, _ range: (lower: [UInt8], upper: [UInt8]?)?
    ) -> (sql: String, parameters: [PostgresConnection.Parameter]) {
        var sql = select
        var parameters: [PostgresConnection.Parameter] = [.text(vault)]
        if let range {
            sql += " AND lookup_id >= $2"
            parameters.append(.bytes(range.lower))
            if let upper = range.upper {
                sql += " AND lookup_id < $3"
                parameters.append(.bytes(upper))
            }
        }
        return (sql + " ORDER BY lookup_id", parameters)
    }

    /// Run right after `set`'s header `UPDATE`, which took the write lock and applied only
    /// if the header still held the generation and tag `set` was prepared from: checks, in
    /// one statement that also reads the snapshot and the transaction id, that the header
    /// now holds what `set` wrote (`$2`, `$3`: the `UPDATE` applied), the row in the
    /// item's place (`$4`; nonce `$5`, NULL for none) and the bucket's digest (`$6`;
    /// digest `$7`, NULL for no row) and the host key wraps' `xmin`s (`$8`, '' for none;
    /// NULL: not compared). Its snapshot is taken after the lock, so it sees every
    /// commit before this one. Any difference leaves no row to count and divides by zero
    /// (SQLSTATE 22012), which aborts the transaction before the item and digest writes and
    /// undoes the header's; nothing else in these statements divides. One join on primary
    /// keys: about half the server time of a subquery per table.
    static let preparedSetCheckSQL = """
        SELECT pg_current_snapshot()::text, pg_current_xact_id_if_assigned()::text, 1 / count(*)
        FROM vaultkit_header h
        LEFT JOIN vaultkit_items i ON i.vault = h.vault AND i.lookup_id = $4
        LEFT JOIN vaultkit_manifest m ON m.vault = h.vault AND m.bucket = $6
        WHERE h.vault = $1 AND h.generation = $2 AND h.manifest_tag = $3
            AND i.nonce IS NOT DISTINCT FROM $5 AND m.digest IS NOT DISTINCT FROM $7
            AND ($8::text IS NULL OR coalesce(\(hostWrapsXminSQL), '') = $8)
        """
    private static let preparedStateDiffers = "22012"

    /// One round trip: the header (whose `UPDATE` takes the lock), the check, the item and
    /// the bucket digest, pipelined up to one sync point and so run as one implicit
    /// transaction (READ COMMITTED, set per session), committed at the sync point, or
    /// rolled back there if any statement failed: when the check fails, the server skips
    /// the item and digest writes and undoes the header's. No `BEGIN`, no `COMMIT` and no
    /// separate lock: three statements fewer than a transaction of its own.
    package func commit(_ set: PreparedSet) throws(StorageError) -> PreparedSet.Outcome {
        try run { () throws in
            // Without a known vault state nothing is required of the header, and the engine
            // is told of a version it has not verified.
            if rowVersions.headerXmin == nil { _ = rowVersions.forgetState() }
            inTransaction = true
            writing = true
            var checked: (snapshot: String, ownTransaction: UInt64?)?
            do {
                try enqueuePrepared(set) { rows in
                    checked = (rows.text(0, 0), rows.isNull(0, 1) ? nil : UInt64(rows.text(0, 1)))
                }
                try connection.flush()
            } catch let failure as PostgresFailure where failure.sqlState == Self.preparedStateDiffers {
                endTransaction(committing: false, rollingBack: false)
                return .stale
            } catch {
                endTransaction(committing: false, rollingBack: false)
                throw error
            }
            guard let checked else {
                // Committed, but the check's row is missing: what was verified is not carried.
                endTransaction(committing: true)
                throw StorageError.corrupted(reason: .unexpectedStorageError)
            }
            ownTransaction = checked.ownTransaction
            lockSnapshot = PostgresSnapshot(checked.snapshot)
            manifestCache.use(version(ofSnapshot: checked.snapshot))
            manifestCache.record(set.bucket, set.digestAfter)
            manifestCache.carry(to: versionAfterOwnCommit())
            // The header's UPDATE required the vault state this version names (when known):
            // nothing else changed the header or the wraps before this commit.
            let before = rowVersions.version
            rowVersions.readsBelong(to: before)
            rowVersions.wrote(lookupID: set.row.lookupID)
            snapshotVersion = rowVersions.committed(own: ownXmin, wroteHeader: true, derivable: true)
            endTransaction(committing: true)
            return .committed(versionBefore: before)
        }
    }

    private func enqueuePrepared(_ set: PreparedSet, onCheck: @escaping (PostgresRows) -> Void) throws {
        let row = set.row
        let bucket = Int64(set.bucket)
        // The header first: its row lock is the write lock, and in READ COMMITTED an
        // `UPDATE` that waited for it re-reads the row, so it applies only if no other
        // writer committed in between, and only to the row version (`xmin`, `$7`) the
        // vault state names, so nobody changed it since either.
        let headerXmin: PostgresConnection.Parameter = rowVersions.headerXmin.map { .text(String($0)) } ?? .nullText
        try connection.enqueue("""
            UPDATE vaultkit_header SET manifest_root = $2, manifest_tag = $3, generation = $4
            WHERE vault = $1 AND generation = $5 AND manifest_tag = $6 AND ($7::text IS NULL OR xmin = $7::xid)
            """, [.text(vault), .bytes(set.root), .bytes(set.tag), .int64(Int64(bitPattern: set.generation)),
                  .int64(Int64(bitPattern: set.generationBefore)), .bytes(set.tagBefore), headerXmin])
        let hostWraps: PostgresConnection.Parameter = rowVersions.headerXmin == nil ? .nullText : .text(rowVersions.hostWraps ?? "")
        try connection.enqueue(Self.preparedSetCheckSQL, [
            .text(vault), .int64(Int64(bitPattern: set.generation)), .bytes(set.tag),
            .bytes(row.lookupID), set.replacedNonce.map { .bytes($0) } ?? .nullBytes,
            .int64(bucket), set.digestBefore.map { .bytes($0) } ?? .nullBytes, hostWraps,
        ], onRows: onCheck)
        let rowParameters: [PostgresConnection.Parameter] = [.text(vault), .bytes(row.lookupID), .bytes(row.serviceTag), .bytes(row.nonce), .bytes(row.sealed)]
        if set.replacedNonce != nil {
            try connection.enqueue("UPDATE vaultkit_items SET service_tag = $3, nonce = $4, sealed = $5 WHERE vault = $1 AND lookup_id = $2", rowParameters)
        } else {
            try connection.enqueue("INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)", rowParameters)
        }
        switch (set.digestBefore, set.digestAfter) {
        case (_, nil):
            try connection.enqueue("DELETE FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(bucket)])
        case (nil, let after?):
            try connection.enqueue("INSERT INTO vaultkit_manifest (vault, bucket, digest) VALUES ($1, $2, $3)", [.text(vault), .int64(bucket), .bytes(after)])
        case (_?, let after?):
            try connection.enqueue("UPDATE vaultkit_manifest SET digest = $3 WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(bucket), .bytes(after)])
        }
    }

    // MARK: Bulk inserts

    /// Rows per statement: about 150 KiB of parameters for small items, and the round
    /// trip becomes a small part of each row's cost.
    package var insertGatherLimit: Int { 1_000 }

    /// All rows in one statement (arrays of each column, `unnest`ed), which returns the rows
    /// that did not go in, each with the row in its place (an import of new items returns
    /// nothing, and looks nothing up).
    package func insertAllIfAbsent(_ rows: [StoredRow]) throws(StorageError) -> [StoredRow?] {
        foundRow = nil
        if let early = openingResult {
            openingResult = nil
            // Only the row sent early is answered by that insert.
            guard rows.count == 1, Self.same(rows[0], early.row) else { throw .corrupted(reason: .unexpectedStorageError) }
            return [try rowInPlace(of: rows[0], inserted: early.inserted, found: early.found)]
        }
        if rows.count == 1 {
            let (inserted, found) = try insertOrFind(rows[0])
            return [try rowInPlace(of: rows[0], inserted: inserted, found: found)]
        }
        let results = try run { () throws in
            try connection.query("""
                WITH new AS (
                    SELECT * FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[])
                        WITH ORDINALITY AS n(lookup_id, service_tag, nonce, sealed, position)
                ), inserted AS (
                    INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed)
                    SELECT $1, lookup_id, service_tag, nonce, sealed FROM new ORDER BY position
                    ON CONFLICT (vault, lookup_id) DO NOTHING
                    RETURNING lookup_id
                )
                SELECT kept_out.position, i.service_tag, i.nonce, i.sealed
                FROM (SELECT position, lookup_id FROM new WHERE lookup_id NOT IN (SELECT lookup_id FROM inserted)) AS kept_out
                LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = kept_out.lookup_id
                """, [.text(vault), .byteaArray(rows.map(\.lookupID)), .byteaArray(rows.map(\.serviceTag)),
                      .byteaArray(rows.map(\.nonce)), .byteaArray(rows.map(\.sealed))]) { result -> [(Bool, StoredRow?)] in
                var outcome = [(Bool, StoredRow?)](repeating: (true, nil), count: rows.count)
                for line in 0..<result.count {
                    let index = Int(result.int64(line, 0)) - 1
                    guard outcome.indices.contains(index), outcome[index].0 else {
                        // A position twice: its lookup id is stored twice.
                        throw StorageError.corrupted(reason: .rowStoredTwice)
                    }
                    outcome[index] = result.isNull(line, 1) ? (false, nil) : (false, StoredRow(
                        lookupID: rows[index].lookupID, serviceTag: result.array(line, 1), nonce: result.array(line, 2), sealed: result.array(line, 3)))
                }
                return outcome
            }
        }
        var found: [StoredRow?] = []
        found.reserveCapacity(rows.count)
        for (row, (inserted, existing)) in zip(rows, results) {
            if inserted { rowVersions.wrote(lookupID: row.lookupID) }
            found.append(try rowInPlace(of: row, inserted: inserted, found: existing))
        }
        return found
    }

    private static func same(_ one: StoredRow, _ other: StoredRow) -> Bool {
        one.lookupID == other.lookupID && one.serviceTag == other.serviceTag && one.nonce == other.nonce && one.sealed == other.sealed
    }

    /// `nil` for a row inserted, else the row in its place: as the inserting statement
    /// found it, or read afresh when that statement's snapshot did not show it (committed
    /// by another session after the snapshot, before the insert).
    private func rowInPlace(of row: StoredRow, inserted: Bool, found: StoredRow?) throws(StorageError) -> StoredRow? {
        if inserted { return nil }
        if let found { return found }
        let lookupID = row.lookupID
        return try run { () throws in
            try connection.query("SELECT service_tag, nonce, sealed FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2",
                                 [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count < 2 else { throw StorageError.corrupted(reason: .rowStoredTwice) }
                // Deleted again meanwhile: only another session, not a writer of this vault, could.
                guard rows.count == 1 else { throw StorageError.corrupted(reason: .unexpectedStorageError) }
                return StoredRow(lookupID: lookupID, serviceTag: rows.array(0, 0), nonce: rows.array(0, 1), sealed: rows.array(0, 2))
            }
        }
    }

    private static let deleteSQL = "DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2 RETURNING service_tag, nonce"

    package func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        foundRow = nil
        rowVersions.wrote(lookupID: lookupID, deleted: true)
        return try run { () throws in
            try connection.query(Self.deleteSQL, [.text(vault), .bytes(lookupID)]) { rows in
                rows.count > 0 ? (rows.array(0, 0), rows.array(0, 1)) : nil
            }
        }
    }

    package func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        foundRow = nil
        rowVersions.forgetRows()
        let (sql, parameters): (String, [PostgresConnection.Parameter]) = if let serviceTag {
            ("DELETE FROM vaultkit_items WHERE vault = $1 AND service_tag = $2 RETURNING lookup_id, service_tag, nonce", [.text(vault), .bytes(serviceTag)])
        } else {
            ("DELETE FROM vaultkit_items WHERE vault = $1 RETURNING lookup_id, service_tag, nonce", [.text(vault)])
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

    // MARK: Manifest and generation

    package func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return (row.manifestRoot, row.manifestTag)
        }
    }

    package func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        try write(changingHeader: true, "UPDATE vaultkit_header SET manifest_root = $2, manifest_tag = $3, generation = $4 WHERE vault = $1",
                  [.text(vault), .bytes(root.bytes), .bytes(tag.bytes), .int64(Int64(bitPattern: generation))])
    }

    package func readGeneration() throws(StorageError) -> UInt64 {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.generationMissing }
            return try row.generation()
        }
    }

    package func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        if manifestCacheUsable, let known = manifestCache.digest(bucket) { return known }
        return try run { () throws in
            let digest = try connection.query("SELECT digest FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(Int64(bucket))]) { rows in
                rows.count > 0 ? rows.array(0, 0) : nil
            }
            if manifestCacheUsable { manifestCache.record(bucket, digest) }
            return digest
        }
    }

    package func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        if manifestCacheUsable { manifestCache.record(bucket, digest.isZero ? nil : digest.bytes) }
        if digest.isZero {
            try write("DELETE FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(Int64(bucket))])
        } else {
            try write("""
                INSERT INTO vaultkit_manifest (vault, bucket, digest) VALUES ($1, $2, $3)
                ON CONFLICT (vault, bucket) DO UPDATE SET digest = EXCLUDED.digest
                """, [.text(vault), .int64(Int64(bucket)), .bytes(digest.bytes)])
        }
    }

    package func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try passing(BodyError.self) {
            try connection.query("SELECT bucket, digest FROM vaultkit_manifest WHERE vault = $1", [.text(vault)]) { rows in
                var all: [Int: [UInt8]] = [:]
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.int64(row, 0), rows.bytes(row, 1)) }
                    if manifestCacheUsable { all[Int(rows.int64(row, 0))] = rows.array(row, 1) }
                }
                // Kept once the engine accepted every row.
                if manifestCacheUsable { manifestCache.recordAll(all) }
            }
        }
    }

    package func deleteAllManifestBuckets() throws(StorageError) {
        if manifestCacheUsable { manifestCache.removeAll() }
        try write("DELETE FROM vaultkit_manifest WHERE vault = $1", [.text(vault)])
    }

    // MARK: Host key wraps

    package func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return row.hostWraps
        }
    }

    package func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        hostWrapsRewritten = true
        try write(changingHeader: true, "UPDATE vaultkit_header SET has_host_wraps = true WHERE vault = $1", [.text(vault)])
        try write(changingHeader: true, "DELETE FROM vaultkit_host_wraps WHERE vault = $1", [.text(vault)])
        for wrap in wraps {
            try write(changingHeader: true,
                      "INSERT INTO vaultkit_host_wraps (vault, name, public_key, sealed_master_key) VALUES ($1, $2, $3, $4)",
                      [.text(vault), .text(wrap.name), .bytes(wrap.publicKey), .bytes(wrap.sealedMasterKey)])
        }
    }

    // MARK: Coordination

    package func sharedLock(named name: String) -> (any SharedLock)? {
        PostgresAdvisoryLock(postgresLocation, name: name)
    }

    // MARK: Plumbing

    /// A write whose result is only checked: in a transaction it travels with the next
    /// statement (or the commit), and its failure is thrown there and rolls all back;
    /// outside one it is sent now.
    /// - Parameter changingHeader: it writes the header row or the host wraps, so the
    ///   row this transaction kept is stale.
    private func write(changingHeader: Bool = false, _ sql: String, _ parameters: [PostgresConnection.Parameter]) throws(StorageError) {
        if changingHeader {
            headerRow = nil
            headerWritten = true
        }
        try run { () throws in
            try connection.enqueue(sql, parameters)
            if !inTransaction { try connection.flush() }
        }
    }

    /// Runs libpq calls; their failures leave as ``StorageError``s.
    private func run<Result>(_ body: () throws -> Result) throws(StorageError) -> Result {
        do {
            if !inTransaction { try reconnectIfEnded() }
            return try body()
        } catch {
            throw storageError(error)
        }
    }

    /// Replaces a session the server ended (a restart, a failover, `pg_terminate_backend`)
    /// before the next transaction or lone statement. The call that met the ended session
    /// failed (`ECONNRESET`: whether a `COMMIT` in flight was applied is unknown, as with
    /// any database, and the engine's next read shows); none after it fails while the
    /// server can be reached. Never inside a transaction, whose work a new session would
    /// not have: the transaction fails and ends.
    private func reconnectIfEnded() throws {
        guard connection.isEnded else { return }
        connection = try PostgresConnection(conninfo: postgresLocation.conninfo, password: postgresLocation.password, lockTimeoutMilliseconds: lockTimeoutMilliseconds)
    }

    /// Runs libpq calls that also call the engine's closure: its error comes back unchanged.
    private func passing<Result, BodyError: Error>(_: BodyError.Type, _ body: () throws -> Result) throws(StorageFailure<BodyError>) -> Result {
        try StorageFailure<BodyError>.catching({ () throws -> Result in
            if !inTransaction { try reconnectIfEnded() }
            return try body()
        }, translating: storageError)
    }

    private func storageError(_ error: any Error) -> StorageError {
        switch error {
        case let error as StorageError: error
        case let error as PostgresFailure: Self.translate(error, location: location)
        default: .corrupted(reason: .unexpectedStorageError)
        }
    }

    /// The boundary where SQLSTATEs become ``StorageError``s.
    static func translate(_ failure: PostgresFailure, location: String) -> StorageError {
        // The server's and libpq's texts stay out of the error (they are free text, and a
        // libpq text may quote the connection string): the failure is told by its errno.
        guard let state = failure.sqlState, !failure.connectionLost else {
            if failure.credentialsRefused { return .unavailable(location: location, errno: EACCES) }
            if failure.tlsFailed { return .unavailable(location: location, errno: EPROTO) }
            return .unavailable(location: location, errno: failure.neverConnected ? ECONNREFUSED : ECONNRESET)
        }
        switch state {
        case "55P03", "40P01", "40001", "57014":  // lock timeout, deadlock, serialization, statement timeout
            return .busy(location: location)
        case "57P01", "57P02", "57P03":  // the server ended the session (administrator, crash, shutting down)
            return .unavailable(location: location, errno: ECONNRESET)
        case "42P01":  // no such table: a database without vaults
            return .notFound(location: location)
        case "53100":
            return .io(path: location, errno: ENOSPC)
        case "53200":
            return .io(path: location, errno: ENOMEM)
        case "42501":
            return .io(path: location, errno: EACCES)
        case "25006":
            return .io(path: location, errno: EROFS)
        case "28000", "28P01":  // authentication refused
            return .unavailable(location: location, errno: EACCES)
        default:
            if state.hasPrefix("XX") { return .corrupted(reason: .storageDamaged) }
            if state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("42") {
                return .corrupted(reason: .storageStructureRefused)
            }
            return .unavailable(location: location, errno: EIO)
        }
    }
}
