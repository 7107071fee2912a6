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
/// - ``snapshotVersion``: a digest of the snapshot (`pg_current_snapshot()`), read after
///   the write lock, by ``pinSnapshot()`` and with a lone item read; it changes whenever any transaction in the cluster commits, including one that
///   changed rows without the engine (an attacker's). After its own commit the storage
///   reports a version no snapshot ever has, so the engine checks the next snapshot
///   afresh instead of assuming nothing else committed meanwhile.
package final class PostgresVaultStorage: VaultStorage {
    package let location: String
    private let vault: String
    /// Where the vault is, for connections besides ``connection`` (``sharedLock(named:)``).
    private let vaultLocation: PostgresVaultLocation
    /// Internal, not private: the tests read the session settings through it.
    let connection: PostgresConnection
    private var inTransaction = false
    package private(set) var snapshotVersion: Int64 = -1
    /// Versions handed out after own commits: negative, never a snapshot's (those are >= 0).
    private var ownCommitVersion: Int64 = -1

    package init(_ location: PostgresVaultLocation, lockTimeoutMilliseconds: Int) throws(StorageError) {
        self.location = location.description
        vault = location.vaultName
        vaultLocation = location
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
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in
                try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                inTransaction = true
                do {
                    let locked = try connection.query("SELECT 1 FROM vaultkit_header WHERE vault = $1 FOR UPDATE", [.text(vault)]) { $0.count }
                    guard locked == 1 else { throw StorageError.notFound(location: location) }
                    // The snapshot after the lock: every earlier writer's commit is in it.
                    try readSnapshotVersion()
                } catch {
                    try? connection.execute("ROLLBACK")
                    inTransaction = false
                    throw error
                }
            }
        }
        defer { inTransaction = false }
        do {
            let result = try StorageFailure<BodyError>.passing(body)
            try StorageFailure<BodyError>.lift { () throws(StorageError) in try run { () throws in try connection.execute("COMMIT") } }
            ownCommitVersion -= 1
            snapshotVersion = ownCommitVersion
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one REPEATABLE READ snapshot; inside a write transaction, in that one.
    package func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        if inTransaction { return try StorageFailure<BodyError>.passing(body) }
        try StorageFailure<BodyError>.lift { () throws(StorageError) in
            try run { () throws in try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") }
        }
        inTransaction = true
        defer {
            inTransaction = false
            try? connection.execute("COMMIT")
        }
        return try StorageFailure<BodyError>.passing(body)
    }

    package func pinSnapshot() throws(StorageError) {
        try run { () throws in try readSnapshotVersion() }
    }

    /// The current snapshot (`xmin:xmax:xip,...`) as a non-negative number: it changes when
    /// any transaction completes, and comes back only if none has.
    private func readSnapshotVersion() throws {
        snapshotVersion = Self.version(ofSnapshot: try connection.query("SELECT pg_current_snapshot()::text") { $0.text(0, 0) })
    }

    private static func version(ofSnapshot snapshot: String) -> Int64 {
        Int64(bitPattern: StableHash.fnv1a(snapshot) & UInt64(Int64.max))
    }

    // MARK: Header

    package func readHeader() throws(StorageError) -> VaultHeader {
        try run { () throws in
            try connection.query("""
                SELECT format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit,
                       master_key_nonce, wrapped_master_key, master_key_check
                FROM vaultkit_header WHERE vault = $1
                """, [.text(vault)]) { rows in
                guard rows.count == 1 else { throw StorageError.notFound(location: location) }
                let version = Int(rows.int64(0, 0))
                guard version <= VaultHeader.currentFormatVersion else { throw StorageError.unsupportedFormatVersion(version) }
                guard version >= 1 else { throw StorageError.corrupted(reason: .invalidFormatVersion) }
                let keySource: VaultHeader.KeySource
                switch rows.text(0, 2) {
                case "argon2id13":
                    let ops = rows.int64(0, 4)
                    let memory = rows.int64(0, 5)
                    guard !rows.isNull(0, 3), ops > 0, memory > 0,
                          let parameters = try? KDFParameters(opsLimit: UInt64(ops), memoryLimit: Int(memory))
                    else { throw StorageError.corrupted(reason: .kdfParametersOutOfBounds) }
                    keySource = .passphrase(salt: rows.array(0, 3), parameters: parameters)
                case "raw":
                    keySource = .rawKey
                default:
                    throw StorageError.corrupted(reason: .unknownKDFAlgorithm)
                }
                return try VaultHeader(
                    formatVersion: version, vaultID: rows.array(0, 1), keySource: keySource,
                    masterKeyNonce: rows.array(0, 6), wrappedMasterKey: rows.array(0, 7), masterKeyCheck: rows.array(0, 8)
                ).validated()
            }
        }
    }

    package func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try run { () throws in
            try connection.query("SELECT master_key_check FROM vaultkit_header WHERE vault = $1", [.text(vault)]) { rows in
                guard rows.count == 1 else { throw StorageError.notFound(location: location) }
                return rows.array(0, 0)
            }
        }
    }

    package func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        try run { () throws in
            _ = try connection.change("""
                UPDATE vaultkit_header SET kdf_algorithm = $2, kdf_salt = $3, kdf_opslimit = $4, kdf_memlimit = $5,
                    master_key_nonce = $6, wrapped_master_key = $7, master_key_check = $8
                WHERE vault = $1
                """, [.text(vault)] + Self.keyWrapping(header))
        }
    }

    package func setFormatVersion(_ version: Int) throws(StorageError) {
        try run { () throws in
            _ = try connection.change("UPDATE vaultkit_header SET format_version = $2 WHERE vault = $1", [.text(vault), .int64(Int64(version))])
        }
    }

    // MARK: Items

    /// Outside a transaction the same statement reads the snapshot, so that
    /// ``snapshotVersion`` names the snapshot this row came from (the engine trusts a
    /// row read alone only if that is the snapshot it verified).
    package func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        try passing(BodyError.self) {
            try connection.query("""
                SELECT i.service_tag, i.nonce, i.sealed, s.snapshot
                FROM (SELECT pg_current_snapshot()::text AS snapshot) s
                LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
                """, [.text(vault), .bytes(lookupID)]) { rows in
                guard rows.count == 1 else { throw StorageError.corrupted(reason: .rowStoredTwice) }
                if !inTransaction { snapshotVersion = Self.version(ofSnapshot: rows.text(0, 3)) }
                guard !rows.isNull(0, 0) else { return nil }
                return try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(0, 0), rows.bytes(0, 1), rows.bytes(0, 2)) }
            }
        }
    }

    package func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        let columns = "SELECT lookup_id, service_tag, nonce, sealed FROM vaultkit_items WHERE vault = $1"
        let (sql, parameters): (String, [PostgresConnection.Parameter]) = if let serviceTag {
            (columns + " AND service_tag = $2", [.text(vault), .bytes(serviceTag)])
        } else {
            (columns, [.text(vault)])
        }
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                for row in 0..<rows.count {
                    let stored = StoredRow(lookupID: rows.array(row, 0), serviceTag: rows.array(row, 1), nonce: rows.array(row, 2), sealed: rows.array(row, 3))
                    try StorageFailure.passing { () throws(BodyError) in try body(stored) }
                }
            }
        }
    }

    /// In lookup id order: `bytea` compares as `memcmp`, then length, as the seam requires.
    package func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        let columns = "SELECT lookup_id, service_tag, nonce FROM vaultkit_items WHERE vault = $1"
        var parameters: [PostgresConnection.Parameter] = [.text(vault)]
        var sql = columns
        if let range {
            sql += " AND lookup_id >= $2"
            parameters.append(.bytes(range.lower))
            if let upper = range.upper {
                sql += " AND lookup_id < $3"
                parameters.append(.bytes(upper))
            }
        }
        sql += " ORDER BY lookup_id"
        try passing(BodyError.self) {
            try connection.query(sql, parameters) { rows in
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.bytes(row, 0), rows.bytes(row, 1), rows.bytes(row, 2)) }
                }
            }
        }
    }

    package func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        try run { () throws in
            _ = try connection.change("""
                INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (vault, lookup_id) DO UPDATE SET service_tag = EXCLUDED.service_tag, nonce = EXCLUDED.nonce, sealed = EXCLUDED.sealed
                """, [.text(vault), .bytes(lookupID), .bytes(serviceTag), .bytes(Array(nonce)), .bytes(sealed)])
        }
    }

    package func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        try run { () throws in
            try connection.change("""
                INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (vault, lookup_id) DO NOTHING
                """, [.text(vault), .bytes(lookupID), .bytes(serviceTag), .bytes(Array(nonce)), .bytes(sealed)]) == 1
        }
    }

    package func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        try run { () throws in
            try connection.query("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2 RETURNING service_tag, nonce",
                                 [.text(vault), .bytes(lookupID)]) { rows in
                rows.count > 0 ? (rows.array(0, 0), rows.array(0, 1)) : nil
            }
        }
    }

    package func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
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
            try connection.query("SELECT manifest_root, manifest_tag FROM vaultkit_header WHERE vault = $1", [.text(vault)]) { rows in
                guard rows.count == 1 else { throw StorageError.notFound(location: location) }
                return (rows.array(0, 0), rows.array(0, 1))
            }
        }
    }

    package func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        try run { () throws in
            _ = try connection.change("UPDATE vaultkit_header SET manifest_root = $2, manifest_tag = $3, generation = $4 WHERE vault = $1",
                                      [.text(vault), .bytes(root.bytes), .bytes(tag.bytes), .int64(Int64(bitPattern: generation))])
        }
    }

    package func readGeneration() throws(StorageError) -> UInt64 {
        try run { () throws in
            try connection.query("SELECT generation FROM vaultkit_header WHERE vault = $1", [.text(vault)]) { rows in
                guard rows.count == 1 else { throw StorageError.generationMissing }
                let value = rows.int64(0, 0)
                guard value >= 0 else { throw StorageError.generationInvalid }
                return UInt64(value)
            }
        }
    }

    package func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        try run { () throws in
            try connection.query("SELECT digest FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(Int64(bucket))]) { rows in
                rows.count > 0 ? rows.array(0, 0) : nil
            }
        }
    }

    package func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        try run { () throws in
            if digest.isZero {
                _ = try connection.change("DELETE FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2", [.text(vault), .int64(Int64(bucket))])
            } else {
                _ = try connection.change("""
                    INSERT INTO vaultkit_manifest (vault, bucket, digest) VALUES ($1, $2, $3)
                    ON CONFLICT (vault, bucket) DO UPDATE SET digest = EXCLUDED.digest
                    """, [.text(vault), .int64(Int64(bucket)), .bytes(digest.bytes)])
            }
        }
    }

    package func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try passing(BodyError.self) {
            try connection.query("SELECT bucket, digest FROM vaultkit_manifest WHERE vault = $1", [.text(vault)]) { rows in
                for row in 0..<rows.count {
                    try StorageFailure.passing { () throws(BodyError) in try body(rows.int64(row, 0), rows.bytes(row, 1)) }
                }
            }
        }
    }

    package func deleteAllManifestBuckets() throws(StorageError) {
        try run { () throws in _ = try connection.change("DELETE FROM vaultkit_manifest WHERE vault = $1", [.text(vault)]) }
    }

    // MARK: Host key wraps

    package func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        try run { () throws in
            try connection.query("""
                SELECT h.has_host_wraps::int::int8, w.name, w.public_key, w.sealed_master_key
                FROM vaultkit_header h LEFT JOIN vaultkit_host_wraps w ON w.vault = h.vault
                WHERE h.vault = $1
                """, [.text(vault)]) { rows -> [StoredHostWrap]? in
                guard rows.count > 0 else { throw StorageError.notFound(location: location) }
                guard rows.int64(0, 0) != 0 else { return nil }
                let wraps = (0..<rows.count).filter { !rows.isNull($0, 1) }.map { row in
                    StoredHostWrap(name: rows.text(row, 1), publicKey: rows.array(row, 2), sealedMasterKey: rows.array(row, 3))
                }
                // The seam's order is UTF-8 bytes of the name, whatever the database's collation.
                return wraps.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            }
        }
    }

    package func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        try run { () throws in
            _ = try connection.change("UPDATE vaultkit_header SET has_host_wraps = true WHERE vault = $1", [.text(vault)])
            _ = try connection.change("DELETE FROM vaultkit_host_wraps WHERE vault = $1", [.text(vault)])
            for wrap in wraps {
                _ = try connection.change(
                    "INSERT INTO vaultkit_host_wraps (vault, name, public_key, sealed_master_key) VALUES ($1, $2, $3, $4)",
                    [.text(vault), .text(wrap.name), .bytes(wrap.publicKey), .bytes(wrap.sealedMasterKey)])
            }
        }
    }

    // MARK: Older formats

    /// PostgreSQL vaults are created in format 3; ``checkSchema(formatVersion:)`` refuses
    /// any other, so the upgrade steps of older file formats never reach this storage.
    package func addManifestSchema() throws(StorageError) { throw .schemaChanged }
    package func addGenerationTable(startingAt generation: UInt64) throws(StorageError) { throw .schemaChanged }

    // MARK: Coordination

    package func sharedLock(named name: String) -> (any SharedLock)? {
        PostgresAdvisoryLock(vaultLocation, name: name)
    }

    // MARK: Plumbing

    /// Runs libpq calls; their failures leave as ``StorageError``s.
    private func run<Result>(_ body: () throws -> Result) throws(StorageError) -> Result {
        do {
            return try body()
        } catch {
            throw storageError(error)
        }
    }

    /// Runs libpq calls that also call the engine's closure: its error comes back unchanged.
    private func passing<Result, BodyError: Error>(_: BodyError.Type, _ body: () throws -> Result) throws(StorageFailure<BodyError>) -> Result {
        try StorageFailure<BodyError>.catching(body, translating: storageError)
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
