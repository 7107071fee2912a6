internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The vault file as SQL: the schema, the header row and the sealed item rows.
///
/// The first ``VaultStorage``: knows nothing of keys or records, it stores and returns
/// opaque bytes. Every SQLite failure leaves this type as a ``StorageError`` (see
/// ``translate(_:path:)``). Beyond the seam it keeps what only a file has: opening
/// read-only or immutable, the side files, and ``backup(into:)``.
/// The format is specified in `docs/FORMAT.md`.
final class VaultDatabase: FormatUpgradingStorage, BackupCapableStorage {
    /// `PRAGMA application_id`: the ASCII bytes "VLTK", so `file(1)`-style tools and
    /// VaultKit can tell a vault from any other SQLite database.
    static let applicationID: Int32 = 0x564C_544B

    let path: String
    var location: String { path }
    private let connection: SQLiteConnection
    /// Why this vault can only be read (read-only media or directory, a full disk), as
    /// the error every write throws; `nil` when it can be written.
    let readOnlyReason: StorageError?

    /// The schema, one statement per object, exactly as SQLite keeps it in `sqlite_schema`
    /// (the text of each `CREATE`, without its semicolon): ``checkSchema(formatVersion:)``
    /// compares the file's schema with these texts.
    /// The header's columns in format 1; format 2 added the manifest's two. The three
    /// texts below are built from this list, so they cannot drift apart.
    private static let formatOneHeaderColumns = [
        "singleton INTEGER PRIMARY KEY CHECK (singleton = 1)",
        "format_version INTEGER NOT NULL",
        "vault_id BLOB NOT NULL",
        "kdf_algorithm TEXT NOT NULL",
        "kdf_salt BLOB",
        "kdf_opslimit INTEGER",
        "kdf_memlimit INTEGER",
        "master_key_nonce BLOB NOT NULL",
        "wrapped_master_key BLOB NOT NULL",
        "master_key_check BLOB NOT NULL",
    ]
    private static let formatOneHeaderBody = "CREATE TABLE vault_header (\n"
        + formatOneHeaderColumns.map { "    " + $0 }.joined(separator: ",\n")
    private static let headerTable = formatOneHeaderBody + ",\n    manifest_root BLOB,\n    manifest_tag BLOB\n) STRICT"
    /// Format 1's header table (internal for the downgrade tests, which forge it).
    static let formatOneHeaderTable = formatOneHeaderBody + "\n) STRICT"
    /// Format 1's table after the upgrade's `ALTER TABLE ... ADD COLUMN`s, as SQLite rewrites it.
    private static let upgradedHeaderTable = formatOneHeaderBody + "\n, manifest_root BLOB, manifest_tag BLOB) STRICT"
    private static let itemsTable = """
        CREATE TABLE vault_items (
            lookup_id BLOB PRIMARY KEY NOT NULL,
            service_tag BLOB NOT NULL,
            nonce BLOB NOT NULL,
            sealed BLOB NOT NULL
        ) STRICT, WITHOUT ROWID
        """
    private static let itemsByServiceIndex = "CREATE INDEX vault_items_by_service ON vault_items (service_tag)"
    /// Format 2's manifest buckets. The header's `manifest_root`/`manifest_tag` columns
    /// may be NULL only in a format-1 file: format 1 created them without, and
    /// `ALTER TABLE ... ADD COLUMN` cannot add a NOT NULL column to existing rows.
    private static let manifestTable = """
        CREATE TABLE vault_manifest (
            bucket INTEGER PRIMARY KEY NOT NULL,
            digest BLOB NOT NULL
        ) STRICT
        """
    /// Format 3's write counter: one more for every committed change (docs/FORMAT.md
    /// section 6), so a state can be told to be older than another (the rollback guard).
    private static let generationTable = """
        CREATE TABLE vault_generation (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            generation INTEGER NOT NULL
        ) STRICT
        """
    /// Host key wraps (docs/FORMAT.md section 12): created by the first `addHost`, so a
    /// vault without hosts keeps exactly the format-3 schema above.
    private static let hostWrapsTable = """
        CREATE TABLE vault_host_wraps (
            name TEXT PRIMARY KEY NOT NULL,
            public_key BLOB NOT NULL,
            sealed_master_key BLOB NOT NULL
        ) STRICT, WITHOUT ROWID
        """
    private static let schema = [headerTable, itemsTable, itemsByServiceIndex, manifestTable, generationTable].joined(separator: ";\n") + ";"

    // MARK: Opening and creating

    /// Opens an existing vault file and checks that it is one: for reading and writing
    /// when this process can write it, its directory and its disk, else for reading only.
    ///
    /// Why reads must not need write access: a backup on read-only media, a vault made
    /// immutable (`chattr +i`), or one in a directory the user may not write must still
    /// open. SQLite's write-ahead log needs `-wal` and `-shm` files beside the vault;
    /// where they cannot be created and do not exist, the file is opened as immutable
    /// (nothing can change it there). Where a non-empty `-wal` exists it holds commits,
    /// so it is read through its `-shm`, or, with no `-shm`, the vault is refused rather
    /// than read without them. A full disk (no room for the side files) is the same case.
    static func openExisting(_ path: String, busyTimeoutMilliseconds: Int32) throws(StorageError) -> VaultDatabase {
        if let reason = FileSystem.whyNotWritable(path) {
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: reason)
        }
        let missing = FileSystem.missingSideFiles(of: path)
        do {
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: nil)
        } catch .io(let failed, let code) where code == ENOSPC || code == EDQUOT {
            // The side files could not be made: leave no empty ones behind, and read.
            FileSystem.removeEmptyFiles(missing)
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: .io(path: failed, errno: code))
        }
    }

    private init(openingExisting path: String, busyTimeoutMilliseconds: Int32, readOnlyBecause reason: StorageError?) throws(StorageError) {
        self.path = path
        readOnlyReason = reason
        let access: SQLiteConnection.Access
        if reason == nil {
            access = .readWrite
        } else if FileSystem.size(of: path + "-wal") ?? 0 > 0 {
            // Commits sit in the log, and reading it takes a -shm file that cannot be made.
            guard FileSystem.size(of: path + "-shm") != nil else {
                if case .io(_, let code)? = reason { throw .io(path: path + "-wal", errno: code) }
                throw .io(path: path + "-wal", errno: EROFS)
            }
            access = .readOnly
        } else {
            access = .immutable
        }
        do {
            connection = try SQLiteConnection(path: path, access: access)
            try connection.configureDefensively(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        } catch {
            throw Self.translate(error, path: path)
        }
        let applicationID = try integerPragma("application_id")
        guard applicationID == Int64(Self.applicationID) else { throw .notAVault(location: path) }
        try run("PRAGMA trusted_schema = OFF")
        try run("PRAGMA secure_delete = ON")
        try run("PRAGMA cell_size_check = ON")
        // Up to 64 MiB of page cache (SQLite's default is 2 MiB), filled only as pages are
        // read: lookup ids are random, so with the default a 100,000-item vault (~31 MiB)
        // re-read and spilled pages on nearly every insert of a bulk import (3-4 preads
        // and pwrites per item), and with 32 MiB a one-batch import of 100,000 items still
        // spilled (96k -> 108k items/s at 64 MiB; see Benchmarks/README.md). A single
        // `get` touches a handful of pages, so a short-lived process never grows to this.
        try run("PRAGMA cache_size = -65536")
        guard reason == nil else { return }
        // A returned write has reached the disk: WAL with a sync on every commit.
        try run("PRAGMA synchronous = FULL")
        let mode = try textPragma("journal_mode = WAL")
        guard mode == "wal" else { throw .io(path: path, errno: EIO) }
    }

    /// Writes a complete new vault into the empty file at `path`, in one transaction.
    /// `manifestTag` is the tag of the empty manifest's root (all zero) under the new keys.
    static func initialize(fileAt path: String, header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        let database = try VaultDatabase(unconfigured: path)
        try database.run("PRAGMA journal_mode = WAL")
        try database.run("PRAGMA synchronous = FULL")
        try database.createVault(header: header, manifestTag: manifestTag)
    }

    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        do {
            try writeTransaction { () throws(StorageError) in
                try run("PRAGMA application_id = \(Self.applicationID)")
                try run("PRAGMA user_version = \(VaultHeader.currentFormatVersion)")
                try run(Self.schema)
                try insertHeader(header)
                try run("INSERT INTO vault_generation (singleton, generation) VALUES (1, 0)")
                try writeManifestRoot(.zero, tag: manifestTag, generation: 0)
            }
        } catch {
            throw error.flattened
        }
    }

    private init(unconfigured path: String) throws(StorageError) {
        self.path = path
        readOnlyReason = nil
        do {
            connection = try SQLiteConnection(path: path)
            try connection.configureDefensively(busyTimeoutMilliseconds: 5_000)
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// Checks that the file holds exactly VaultKit's tables and index, defined exactly as
    /// VaultKit defines them, and nothing else (no trigger, view or extra index).
    ///
    /// Why: the rows' integrity rests on the schema. A `vault_items` rebuilt without its
    /// primary key could hold one lookup id twice; a trigger or view could change what a
    /// statement does. SQLite keeps each object's `CREATE` text, so comparing texts is
    /// one cheap query.
    func checkSchema(formatVersion: Int) throws(StorageError) {
        var expected: [String: Set<String>] = [
            "table vault_items": [Self.itemsTable],
            "index vault_items_by_service": [Self.itemsByServiceIndex],
        ]
        if formatVersion >= 2 {
            expected["table vault_header"] = [Self.headerTable, Self.upgradedHeaderTable]
            expected["table vault_manifest"] = [Self.manifestTable]
            if formatVersion >= 3 { expected["table vault_generation"] = [Self.generationTable] }
        } else {
            expected["table vault_header"] = [Self.formatOneHeaderTable]
        }
        // The one optional object: its presence is authenticated by the manifest tag instead.
        let optional: [String: Set<String>] = formatVersion >= 3 ? ["table vault_host_wraps": [Self.hostWrapsTable]] : [:]
        var seen = 0
        try query("SELECT type, name, sql FROM sqlite_schema") { statement in
            while try statement.step() {
                let key = "\(statement.text(0) ?? "") \(statement.text(1) ?? "")"
                if let texts = optional[key], let sql = statement.text(2), texts.contains(sql) { continue }
                guard let texts = expected[key], let sql = statement.text(2), texts.contains(sql) else {
                    throw StorageError.schemaChanged
                }
                seen += 1
            }
        }
        guard seen == expected.count else { throw .schemaChanged }
    }

    // MARK: Backup

    /// Copies this database, as one consistent snapshot, into the empty file at
    /// `destination` with SQLite's online backup (`sqlite3_backup_*`), and syncs it.
    ///
    /// Why not copy the file: committed data may still be in `-wal`, which a copy of the
    /// main file alone misses (and a copy taken mid-write is torn).
    func backup(into destination: String) throws(StorageError) {
        let target: SQLiteConnection
        do {
            target = try SQLiteConnection(path: destination)
            try target.configureDefensively(busyTimeoutMilliseconds: 5_000)
            // A rollback journal while copying, synced on commit: the copy is on disk when
            // this returns; opening it later as a vault switches it to WAL.
            try target.execute("PRAGMA synchronous = FULL")
        } catch {
            throw Self.translate(error, path: destination)
        }
        guard let backup = sqlite3_backup_init(target.handle, "main", connection.handle, "main") else {
            throw Self.translate(target.error(sqlite3_errcode(target.handle)), path: destination)
        }
        let status = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE, finish == SQLITE_OK else {
            let code = status == SQLITE_DONE ? finish : status
            if code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED { throw .busy(location: path) }
            throw Self.translate(target.error(code), path: destination)
        }
    }

    // MARK: Transactions

    /// Runs `body` holding the database's write lock (`BEGIN IMMEDIATE`), so a
    /// read-then-write inside it cannot race another process; commits durably, or
    /// rolls back if `body` throws.
    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if let readOnlyReason { throw .storage(readOnlyReason) }
        try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("BEGIN IMMEDIATE") }
        do {
            let result = try StorageFailure<BodyError>.passing(body)
            try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("COMMIT") }
            return result
        } catch {
            try? run("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one read snapshot, so a multi-row read sees one consistent state;
    /// inside a transaction already, in that one's.
    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if connection.isInTransaction { return try StorageFailure<BodyError>.passing(body) }
        try StorageFailure<BodyError>.lift { () throws(StorageError) in try run("BEGIN DEFERRED") }
        defer { try? run("COMMIT") }
        return try StorageFailure<BodyError>.passing(body)
    }

    // MARK: Header

    func readHeader() throws(StorageError) -> VaultHeader {
        try query("""
            SELECT format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit,
                   master_key_nonce, wrapped_master_key, master_key_check
            FROM vault_header WHERE singleton = 1
            """) { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            let version = Int(statement.int64(0))
            guard version <= VaultHeader.currentFormatVersion else { throw StorageError.unsupportedFormatVersion(version) }
            guard version >= 1 else { throw StorageError.corrupted(reason: .invalidFormatVersion) }
            let keySource: VaultHeader.KeySource
            switch statement.text(2) {
            case "argon2id13":
                let ops = statement.int64(4)
                let memory = statement.int64(5)
                guard ops > 0, memory > 0,
                      let parameters = try? KDFParameters(opsLimit: UInt64(ops), memoryLimit: Int(memory))
                else { throw StorageError.corrupted(reason: .kdfParametersOutOfBounds) }
                keySource = .passphrase(salt: Array(statement.blob(3)), parameters: parameters)
            case "raw":
                keySource = .rawKey
            default:
                throw StorageError.corrupted(reason: .unknownKDFAlgorithm)
            }
            return try VaultHeader(
                formatVersion: version,
                vaultID: Array(statement.blob(1)),
                keySource: keySource,
                masterKeyNonce: Array(statement.blob(6)),
                wrappedMasterKey: Array(statement.blob(7)),
                masterKeyCheck: Array(statement.blob(8))
            ).validated()
        }
    }

    /// The header's key check value alone: the cheap test for "re-keyed by another process".
    func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try query("SELECT master_key_check FROM vault_header WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            return Array(statement.blob(0))
        }
    }

    private func insertHeader(_ header: VaultHeader) throws(StorageError) {
        try query("""
            INSERT INTO vault_header (singleton, format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit,
                                      kdf_memlimit, master_key_nonce, wrapped_master_key, master_key_check)
            VALUES (1, ?, ?, 'raw', NULL, NULL, NULL, ?, ?, ?)
            """) { statement in
            try statement.bind(1, int64: Int64(header.formatVersion))
            try statement.bind(2, blob: header.vaultID)
            try statement.bind(3, blob: header.masterKeyNonce)
            try statement.bind(4, blob: header.wrappedMasterKey)
            try statement.bind(5, blob: header.masterKeyCheck)
            _ = try statement.step()
        }
        try updateKeyWrapping(header)
    }

    /// Rewrites how the master key is wrapped (passphrase change, re-key).
    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        try query("""
            UPDATE vault_header SET kdf_algorithm = ?, kdf_salt = ?, kdf_opslimit = ?, kdf_memlimit = ?,
                master_key_nonce = ?, wrapped_master_key = ?, master_key_check = ?
            WHERE singleton = 1
            """) { statement in
            switch header.keySource {
            case .passphrase(let salt, let parameters):
                try statement.bind(1, text: "argon2id13")
                try statement.bind(2, blob: salt)
                try statement.bind(3, int64: Int64(parameters.opsLimit))
                try statement.bind(4, int64: Int64(parameters.memoryLimit))
            case .rawKey:
                try statement.bind(1, text: "raw")
                try statement.bindNull(2)
                try statement.bindNull(3)
                try statement.bindNull(4)
            }
            try statement.bind(5, blob: header.masterKeyNonce)
            try statement.bind(6, blob: header.wrappedMasterKey)
            try statement.bind(7, blob: header.masterKeyCheck)
            _ = try statement.step()
        }
    }

    // MARK: Host key wraps

    func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        let exists = try query("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'vault_host_wraps'") { statement in
            _ = try statement.step()
            return statement.int64(0) > 0
        }
        guard exists else { return nil }
        return try query("SELECT name, public_key, sealed_master_key FROM vault_host_wraps ORDER BY CAST(name AS BLOB)") { statement in
            var wraps: [StoredHostWrap] = []
            while try statement.step() {
                wraps.append(StoredHostWrap(
                    name: statement.text(0) ?? "", publicKey: Array(statement.blob(1)), sealedMasterKey: Array(statement.blob(2))
                ))
            }
            return wraps
        }
    }

    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        if try readHostWraps() == nil { try run(Self.hostWrapsTable) }
        try run("DELETE FROM vault_host_wraps")
        for wrap in wraps {
            try query("INSERT INTO vault_host_wraps (name, public_key, sealed_master_key) VALUES (?, ?, ?)") { statement in
                try statement.bind(1, text: wrap.name)
                try statement.bind(2, blob: wrap.publicKey)
                try statement.bind(3, blob: wrap.sealedMasterKey)
                _ = try statement.step()
            }
        }
    }

    // MARK: Items

    /// Calls `body` with the service tag, nonce and sealed record of one item, without
    /// copying them, or returns `nil` when there is no such row.
    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        try query("SELECT service_tag, nonce, sealed FROM vault_items WHERE lookup_id = ?", passing: BodyError.self) { statement in
            try statement.bind(1, blob: lookupID)
            guard try statement.step() else { return nil }
            return try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
        }
    }

    /// Calls `body` for every row, or every row with this service tag.
    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let sql = serviceTag == nil
            ? "SELECT lookup_id, service_tag, nonce, sealed FROM vault_items"
            : "SELECT lookup_id, service_tag, nonce, sealed FROM vault_items WHERE service_tag = ?"
        try query(sql, passing: BodyError.self) { statement in
            if let serviceTag { try statement.bind(1, blob: serviceTag) }
            while try statement.step() {
                let row = StoredRow(
                    lookupID: Array(statement.blob(0)), serviceTag: Array(statement.blob(1)),
                    nonce: Array(statement.blob(2)), sealed: Array(statement.blob(3))
                )
                try StorageFailure.passing { () throws(BodyError) in try body(row) }
            }
        }
    }

    /// Calls `body` with the identifying columns (not the sealed record) of every row,
    /// or of the rows whose lookup id is in `range.lower ..< range.upper` (`upper` is
    /// `nil` for no upper bound), in lookup id order, without copying them: what the
    /// manifest is computed from.
    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let columns = "SELECT lookup_id, service_tag, nonce FROM vault_items"
        let sql = switch range {
        case nil: "\(columns) ORDER BY lookup_id"
        case (_, nil)?: "\(columns) WHERE lookup_id >= ?1 ORDER BY lookup_id"
        case _?: "\(columns) WHERE lookup_id >= ?1 AND lookup_id < ?2 ORDER BY lookup_id"
        }
        try query(sql, passing: BodyError.self) { statement in
            if let range {
                try statement.bind(1, blob: range.lower)
                if let upper = range.upper { try statement.bind(2, blob: upper) }
            }
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
            }
        }
    }

    /// Inserts the row, or replaces the one with the same lookup id.
    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        _ = try writeRow("INSERT OR REPLACE INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES (?, ?, ?, ?)",
                         lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    /// Inserts the row unless one with its lookup id exists; returns whether it inserted.
    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        try writeRow("INSERT INTO vault_items (lookup_id, service_tag, nonce, sealed) VALUES (?, ?, ?, ?) ON CONFLICT (lookup_id) DO NOTHING",
                     lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed) > 0
    }

    /// Runs an insert of one item row; returns how many rows it changed.
    private func writeRow(_ sql: String, lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Int {
        try query(sql) { statement in
            try statement.bind(1, blob: lookupID)
            try statement.bind(2, blob: serviceTag)
            try statement.bind(3, blob: nonce)
            try statement.bind(4, blob: sealed)
            _ = try statement.step()
            return connection.changes
        }
    }

    /// Deletes one row; returns its service tag and nonce if it existed.
    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        try query("DELETE FROM vault_items WHERE lookup_id = ? RETURNING service_tag, nonce") { statement in
            try statement.bind(1, blob: lookupID)
            guard try statement.step() else { return nil }
            let deleted = (Array(statement.blob(0)), Array(statement.blob(1)))
            while try statement.step() {}
            return deleted
        }
    }

    /// Deletes every row with this service tag, or every row, calling `body` with the
    /// identifying columns of each deleted row; returns how many.
    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        let sql = serviceTag == nil
            ? "DELETE FROM vault_items RETURNING lookup_id, service_tag, nonce"
            : "DELETE FROM vault_items WHERE service_tag = ? RETURNING lookup_id, service_tag, nonce"
        return try query(sql, passing: BodyError.self) { statement in
            if let serviceTag { try statement.bind(1, blob: serviceTag) }
            var count = 0
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.blob(0), statement.blob(1), statement.blob(2)) }
                count += 1
            }
            return count
        }
    }

    // MARK: Manifest (format 2; see ManifestHash.swift and docs/FORMAT.md)

    /// The stored manifest root and its tag; `nil` where a column is NULL (format 1).
    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        try query("SELECT manifest_root, manifest_tag FROM vault_header WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            return (statement.isNull(0) ? nil : Array(statement.blob(0)), statement.isNull(1) ? nil : Array(statement.blob(1)))
        }
    }

    /// Stores the root, its tag and the generation the tag covers, in the caller's transaction.
    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        try query("UPDATE vault_header SET manifest_root = ?, manifest_tag = ? WHERE singleton = 1") { statement in
            try statement.bind(1, blob: root.bytes)
            try statement.bind(2, blob: tag.bytes)
            _ = try statement.step()
        }
        try query("UPDATE vault_generation SET generation = ? WHERE singleton = 1") { statement in
            try statement.bind(1, int64: Int64(bitPattern: generation))
            _ = try statement.step()
        }
    }

    /// The write counter (format 3).
    func readGeneration() throws(StorageError) -> UInt64 {
        try query("SELECT generation FROM vault_generation WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.generationMissing }
            let value = statement.int64(0)
            guard value >= 0 else { throw StorageError.generationInvalid }
            return UInt64(value)
        }
    }

    /// Adds format 3's generation table, counting from `generation` (format upgrade).
    func addGenerationTable(startingAt generation: UInt64) throws(StorageError) {
        try run(Self.generationTable)
        try run("INSERT INTO vault_generation (singleton, generation) VALUES (1, \(generation))")
    }

    /// One bucket's stored digest as raw bytes, or `nil` when it has no row (empty bucket).
    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        try query("SELECT digest FROM vault_manifest WHERE bucket = ?") { statement in
            try statement.bind(1, int64: Int64(bucket))
            guard try statement.step() else { return nil }
            return Array(statement.blob(0))
        }
    }

    /// Stores a bucket's digest; an all-zero digest (an empty bucket) is stored as no row.
    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        let sql = digest.isZero
            ? "DELETE FROM vault_manifest WHERE bucket = ?"
            : "INSERT OR REPLACE INTO vault_manifest (bucket, digest) VALUES (?, ?)"
        try query(sql) { statement in
            try statement.bind(1, int64: Int64(bucket))
            if !digest.isZero { try statement.bind(2, blob: digest.bytes) }
            _ = try statement.step()
        }
    }

    /// Calls `body` for every stored bucket digest.
    func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try query("SELECT bucket, digest FROM vault_manifest", passing: BodyError.self) { statement in
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.int64(0), statement.blob(1)) }
            }
        }
    }

    func deleteAllManifestBuckets() throws(StorageError) {
        try run("DELETE FROM vault_manifest")
    }

    /// Turns a format-1 file into format 2's schema (the caller fills the manifest in,
    /// in the same transaction).
    func addManifestSchema() throws(StorageError) {
        try run("ALTER TABLE vault_header ADD COLUMN manifest_root BLOB")
        try run("ALTER TABLE vault_header ADD COLUMN manifest_tag BLOB")
        try run(Self.manifestTable)
    }

    func setFormatVersion(_ version: Int) throws(StorageError) {
        try run("UPDATE vault_header SET format_version = \(version) WHERE singleton = 1")
        try run("PRAGMA user_version = \(version)")
    }

    /// The version of the snapshot the last statement read (see
    /// ``SQLiteConnection/dataVersion``): what a process verified of the file holds
    /// while it stays the same, and this connection's own commits move it on.
    var snapshotVersion: Int64 { Int64(connection.dataVersion) }

    /// Starts the read snapshot of an open `BEGIN DEFERRED` transaction with the
    /// cheapest read there is, so ``snapshotVersion`` names it.
    func pinSnapshot() throws(StorageError) {
        try query("SELECT 1 FROM vault_header WHERE singleton = 1") { statement in _ = try statement.step() }
    }

    // MARK: Plumbing

    private func run(_ sql: String) throws(StorageError) {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        do { try connection.execute(sql) } catch { throw Self.translate(error, path: path) }
    }

    private func integerPragma(_ pragma: String) throws(StorageError) -> Int64 {
        try query("PRAGMA \(pragma)") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .emptyPragmaResult) }
            return statement.int64(0)
        }
    }

    private func textPragma(_ pragma: String) throws(StorageError) -> String? {
        try query("PRAGMA \(pragma)") { statement in
            guard try statement.step() else { return nil }
            return statement.text(0)
        }
    }

    /// Runs one statement; `body` may throw ``SQLiteError`` and ``StorageError`` only.
    private func query<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws(StorageError) -> Result {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        do {
            return try connection.withStatement(sql, body)
        } catch {
            throw storageError(error)
        }
    }

    /// Runs one statement whose `body` also calls the engine's closure, through
    /// ``StorageFailure/passing(_:)``: that closure's error comes back unchanged.
    private func query<Result, BodyError: Error>(
        _ sql: String, passing: BodyError.Type, _ body: (SQLiteStatement) throws -> Result
    ) throws(StorageFailure<BodyError>) -> Result {
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        return try StorageFailure<BodyError>.catching({ try connection.withStatement(sql, body) }, translating: storageError)
    }

    private func storageError(_ error: any Error) -> StorageError {
        switch error {
        case let error as StorageError: error
        case let error as SQLiteError: Self.translate(error, path: path)
        default: .corrupted(reason: .unexpectedStorageError)
        }
    }

    /// Whether `ulimit -f` limits the size of files this process writes. SQLite reports
    /// a write cut short by that limit (EFBIG, once SIGXFSZ is ignored) as
    /// `SQLITE_IOERR_WRITE` without keeping the errno, so under a limit that is taken as
    /// the cause rather than reported as a bare I/O error.
    private static var fileSizeIsLimited: Bool {
        var limit = rlimit()
        #if canImport(Glibc)
        let (resource, infinity) = (__rlimit_resource_t(RLIMIT_FSIZE.rawValue), rlim_t.max)  // RLIM_INFINITY is ~0
        #else
        let (resource, infinity) = (RLIMIT_FSIZE, RLIM_INFINITY)
        #endif
        return getrlimit(resource, &limit) == 0 && limit.rlim_cur != infinity
    }

    /// The boundary where SQLite's result codes become ``StorageError``s.
    static func translate(_ error: SQLiteError, path: String) -> StorageError {
        switch error.primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(location: path)
        case SQLITE_NOTADB:
            return .notAVault(location: path)
        case SQLITE_CORRUPT:
            return .corrupted(reason: .storageDamaged)
        case SQLITE_FORMAT, SQLITE_MISMATCH, SQLITE_CONSTRAINT, SQLITE_SCHEMA, SQLITE_ERROR, SQLITE_RANGE:
            return .corrupted(reason: .storageStructureRefused)
        case SQLITE_NOMEM:
            return .io(path: path, errno: ENOMEM)
        case SQLITE_FULL:
            return .io(path: path, errno: error.systemErrno != 0 ? error.systemErrno : ENOSPC)
        case SQLITE_PERM, SQLITE_AUTH:
            return .io(path: path, errno: error.systemErrno != 0 ? error.systemErrno : EACCES)
        case SQLITE_READONLY:
            return .io(path: path, errno: error.systemErrno != 0 ? error.systemErrno : EROFS)
        default: // SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PROTOCOL, ...
            if error.systemErrno == 0, error.code == SQLITE_IOERR | (3 << 8),  // SQLITE_IOERR_WRITE
                fileSizeIsLimited { return .io(path: path, errno: EFBIG) }
            return .io(path: path, errno: error.systemErrno != 0 ? error.systemErrno : EIO)
        }
    }
}
