internal import CSQLite

/// A failed SQLite call: the extended result code, the OS `errno` behind an I/O error,
/// and SQLite's generic text for the code (never the connection's message, which can
/// quote SQL).
struct SQLiteError: Error {
    let code: Int32
    let systemErrno: Int32
    var primaryCode: Int32 { code & 0xFF }
    var message: String { String(cString: sqlite3_errstr(code)) }
}

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe by itself: ``Vault`` serialises all use behind its mutex, which is
/// why the connection is opened with `SQLITE_OPEN_NOMUTEX`.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// How a connection may use its file.
    enum Access {
        case readWrite
        /// Reads only, with SQLite's usual locking and write-ahead log.
        case readOnly
        /// Reads only, and SQLite assumes nothing changes the file: no locks, no `-wal` or
        /// `-shm` created. For a file on read-only media, which no one can change.
        case immutable
    }

    /// Opens an existing database file; never creates one.
    init(path: String, access: Access = .readWrite) throws(SQLiteError) {
        var handle: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW
        var name = path
        switch access {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable:
            flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
            name = "file:" + Self.percentEncoded(path) + "?immutable=1"
        }
        let status = sqlite3_open_v2(name, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let error = SQLiteError(code: status, systemErrno: handle.map { sqlite3_system_errno($0) } ?? 0)
            sqlite3_close_v2(handle)
            throw error
        }
        self.handle = handle
    }

    /// A path as the path part of a `file:` URI: every byte but unreserved ones and `/`
    /// as `%HH`, so `?`, `#` and `%` in a file name stay part of it.
    private static func percentEncoded(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count < 2 ? "0" : "") + hex
            }
        }
        return result
    }

    deinit {
        statements.removeAll()  // finalize before closing
        sqlite3_close_v2(handle)
    }

    /// Turns on SQLITE_DBCONFIG_DEFENSIVE and friends; see docs/FORMAT.md section 7.
    func configureDefensively(busyTimeoutMilliseconds: Int32) throws(SQLiteError) {
        _ = vaultkit_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_DEFENSIVE, 1)
        _ = vaultkit_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        _ = vaultkit_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
        _ = vaultkit_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_VIEW, 0)
        _ = vaultkit_sqlite3_db_config_flag(handle, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
    }

    /// Runs SQL that has no parameters and whose rows, if any, are ignored.
    func execute(_ sql: String) throws(SQLiteError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status) }
    }

    /// A cached prepared statement, reset and with its bindings cleared after `body`.
    func withStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws -> Result {
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            statement = cached
        } else {
            var raw: OpaquePointer?
            let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
            guard status == SQLITE_OK, let raw else { throw error(status) }
            statement = SQLiteStatement(handle: raw, connection: self)
            statements[sql] = statement
        }
        defer { statement.reset() }
        return try body(statement)
    }

    /// The pager's data version (`SQLITE_FCNTL_DATA_VERSION`): it changes when this
    /// connection commits, or when a read transaction of this connection first sees a
    /// commit by another one. Read right after a statement, it names the snapshot the
    /// statement read; no SQL runs, so it costs far less than `PRAGMA data_version`.
    var dataVersion: UInt32 {
        var version: UInt32 = 0
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version)
        return version
    }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, systemErrno: sqlite3_system_errno(handle))
    }
}

/// A prepared statement owned by its connection's cache.
final class SQLiteStatement {
    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func bind(_ index: Int32, blob: UnsafeRawBufferPointer) throws(SQLiteError) {
        let status = bindStatus(index, blob: blob)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    func bind(_ index: Int32, blob: [UInt8]) throws(SQLiteError) {
        let status = blob.withUnsafeBytes { bytes in bindStatus(index, blob: bytes) }
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    /// An empty buffer may have no base address, so empty blobs are bound as zero-length zeroblobs.
    private func bindStatus(_ index: Int32, blob: UnsafeRawBufferPointer) -> Int32 {
        guard let base = blob.baseAddress, blob.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return vaultkit_sqlite3_bind_blob_copy(handle, index, base, Int32(blob.count))
    }

    func bind(_ index: Int32, int64 value: Int64) throws(SQLiteError) {
        let status = sqlite3_bind_int64(handle, index, value)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    func bind(_ index: Int32, text: String) throws(SQLiteError) {
        let status = vaultkit_sqlite3_bind_text_copy(handle, index, text, -1)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    func bindNull(_ index: Int32) throws(SQLiteError) {
        let status = sqlite3_bind_null(handle, index)
        guard status == SQLITE_OK else { throw connection.error(status) }
    }

    /// Advances to the next row; `false` when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw connection.error(status)
        }
    }

    /// The column's bytes, valid until the next step or reset.
    func blob(_ column: Int32) -> UnsafeRawBufferPointer {
        let base = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return UnsafeRawBufferPointer(start: base, count: count)
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func text(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}
