internal import CLibPQ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// One libpq connection: statements with binary parameters and binary results, and
/// failures as ``PostgresFailure`` with any password removed from the server's text.
///
/// Why libpq and blocking calls: the storage seam is blocking and runs on threads the
/// vault owns, so a blocking client needs no bridging; libpq reads the password from
/// `PGPASSFILE`, `~/.pgpass` or `PGPASSWORD` by itself, and does TLS with certificate
/// verification (`sslmode=verify-full`) over the system's OpenSSL.
final class PostgresConnection {
    /// A statement parameter, sent in binary with its type named, so no value is ever
    /// spliced into SQL text.
    enum Parameter {
        case bytes([UInt8])
        case text(String)
        case int64(Int64)
        case nullBytes
        case nullInt64

        fileprivate var typeOID: Oid {
            switch self {
            case .bytes, .nullBytes: 17  // bytea
            case .text: 25  // text
            case .int64, .nullInt64: 20  // int8
            }
        }

        /// The binary value, `nil` for SQL NULL.
        fileprivate var encoded: [UInt8]? {
            switch self {
            case .bytes(let bytes): bytes
            case .text(let text): Array(text.utf8)
            case .int64(let value): withUnsafeBytes(of: value.bigEndian) { Array($0) }
            case .nullBytes, .nullInt64: nil
            }
        }
    }

    private let handle: OpaquePointer
    /// The password given in the connection string, if any: removed from every message.
    private let password: String?

    /// Connects and sets the session up: durable commits and the lock wait limit.
    init(conninfo: String, password: String?, lockTimeoutMilliseconds: Int) throws(PostgresFailure) {
        self.password = password
        guard let handle = PQconnectdb(conninfo) else {
            throw PostgresFailure(sqlState: nil, message: "out of memory", connectionLost: true, neverConnected: true)
        }
        self.handle = handle
        guard PQstatus(handle) == CONNECTION_OK else {
            // Every stored property is set, so deinit runs and finishes the handle.
            let message = Self.scrubbed(String(cString: PQerrorMessage(handle)), password: password)
            // The server was reached and a password was sent: the credentials were refused
            // (libpq gives no SQLSTATE for a failed connection).
            let refused = PQconnectionUsedPassword(handle) != 0
            throw PostgresFailure(sqlState: nil, message: message, connectionLost: true, neverConnected: true, credentialsRefused: refused)
        }
        // Server notices ("relation already exists, skipping") are not the caller's
        // business: libpq would print them to standard error.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Set per session, whatever the server's or role's default: a commit returns only
        // once its WAL is flushed on the server.
        try execute("SET synchronous_commit = on; SET lock_timeout = \(max(lockTimeoutMilliseconds, 1))")
    }

    deinit {
        PQfinish(handle)
    }

    /// Runs one or more statements without parameters (the simple protocol): the result
    /// of the last one, as text, in `body`.
    func execute(_ sql: String) throws(PostgresFailure) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs one statement, its rows (binary) given to `body`. `body` may throw anything:
    /// its errors come back unchanged.
    func query<Result>(_ sql: String, _ parameters: [Parameter] = [], _ body: (PostgresRows) throws -> Result) throws -> Result {
        let encoded = parameters.map(\.encoded)
        let buffers = encoded.map { value -> UnsafeMutablePointer<CChar>? in
            guard let bytes = value else { return nil }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { if let base = $0.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count) } }
            return buffer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let types = parameters.map(\.typeOID)
        let lengths = encoded.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        let result = PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        defer { PQclear(result) }
        try check(result)
        return try body(PostgresRows(result: result!))
    }

    /// Runs one statement and returns how many rows it changed.
    func change(_ sql: String, _ parameters: [Parameter]) throws -> Int {
        try query(sql, parameters) { rows in rows.changed }
    }

    private func check(_ result: OpaquePointer?) throws(PostgresFailure) {
        guard let result else {
            throw PostgresFailure(sqlState: nil, message: Self.scrubbed(String(cString: PQerrorMessage(handle)), password: password), connectionLost: true)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            return
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = Self.scrubbed(String(cString: PQresultErrorMessage(result)), password: password)
            throw PostgresFailure(sqlState: sqlState, message: message, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
    }

    /// `message` without the password, and on one line.
    static func scrubbed(_ message: String, password: String?) -> String {
        var text = message
        if let password, !password.isEmpty { text = text.replacingBytes(of: password, with: "***") }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingWhitespace()
    }
}

/// The rows of one result, valid inside the closure that receives them.
struct PostgresRows {
    fileprivate let result: OpaquePointer

    var count: Int { Int(PQntuples(result)) }

    /// How many rows an INSERT, UPDATE or DELETE changed.
    var changed: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// A `bytea` or `text` column's bytes, without copying.
    func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), Int32(column)), count: length)
    }

    func array(_ row: Int, _ column: Int) -> [UInt8] { Array(bytes(row, column)) }

    func text(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// A `bigint` column (binary: eight bytes, big-endian).
    func int64(_ row: Int, _ column: Int) -> Int64 {
        let raw = bytes(row, column)
        guard raw.count == 8 else { return Int64.min }
        return raw.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
}

/// A failed libpq call: the SQLSTATE (`nil` when the connection itself failed) and the
/// server's message with any password removed.
struct PostgresFailure: Error {
    let sqlState: String?
    let message: String
    let connectionLost: Bool
    /// The session was never established (the server unreachable or refusing it).
    var neverConnected = false
    /// The server refused the password it was sent.
    var credentialsRefused = false
}
