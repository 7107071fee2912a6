internal import CLibPQ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// One libpq connection: prepared statements with binary parameters and binary results,
/// sent in pipelines, and failures as ``PostgresFailure`` with any password removed from
/// the server's text.
///
/// Why libpq and blocking calls: the storage seam is blocking and runs on threads the
/// vault owns, so a blocking client needs no bridging; libpq reads the password from
/// `PGPASSFILE`, `~/.pgpass` or `PGPASSWORD` by itself, and does TLS with certificate
/// verification (`sslmode=verify-full`) over the system's OpenSSL.
///
/// Why pipelines and prepared statements: on a local server a round trip costs more than
/// the statement it carries, and parsing and planning a statement costs about as much
/// again. So every statement is prepared once per session (named by its text), and
/// statements whose results are only checked (``enqueue(_:_:)``) wait and travel with
/// the next one that returns rows, in one pipeline: one round trip for all of them.
/// The first failure in a pipeline is the one thrown; the server skips the rest and
/// leaves an open transaction aborted, so the caller's `ROLLBACK` undoes all of it.
final class PostgresConnection {
    /// A statement parameter, sent in binary with its type named, so no value is ever
    /// spliced into SQL text.
    enum Parameter {
        case bytes([UInt8])
        case text(String)
        case int64(Int64)
        case nullBytes
        case nullInt64
        case nullText
        /// A one-dimensional `bytea[]` without NULLs.
        case byteaArray([[UInt8]])

        fileprivate var typeOID: Oid {
            switch self {
            case .bytes, .nullBytes: 17  // bytea
            case .text, .nullText: 25  // text
            case .int64, .nullInt64: 20  // int8
            case .byteaArray: 1001  // bytea[]
            }
        }

        /// Appends the binary value to `buffer`; `false` for SQL NULL.
        fileprivate func encode(into buffer: inout [UInt8]) -> Bool {
            switch self {
            case .bytes(let bytes): buffer += bytes
            case .text(let text): buffer += text.utf8
            case .int64(let value): withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
            case .byteaArray(let elements):
                // The binary array format: dimensions, a has-NULLs flag, the element type,
                // each dimension's length and lower bound, then each element's length and bytes.
                let header: [Int32] = [1, 0, 17, Int32(elements.count), 1]
                for value in header { Self.append(value, to: &buffer) }
                for element in elements {
                    Self.append(Int32(element.count), to: &buffer)
                    buffer += element
                }
            case .nullBytes, .nullInt64, .nullText: return false
            }
            return true
        }

        private static func append(_ value: Int32, to buffer: inout [UInt8]) {
            withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
        }
    }

    /// A statement and its parameters, waiting to be sent.
    private struct Statement {
        let sql: String
        let parameters: [Parameter]
        /// Given the statement's rows, if it succeeds (a queued read whose answer is kept).
        var onRows: ((PostgresRows) -> Void)? = nil
    }

    /// What names a prepared statement: its text and its parameters' types.
    private struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    private let handle: OpaquePointer
    /// The password given in the connection string, if any: removed from every message.
    private let password: String?
    /// The session's prepared statements. A new connection starts with none, so a
    /// reconnect never meets a name the server has forgotten.
    private var prepared: [StatementKey: String] = [:]
    /// The number in the next prepared statement's name (never reused in a session).
    private var nextStatementNumber = 0
    /// Statements whose results are only checked, sent with the next round trip.
    private var queued: [Statement] = []
    /// Beyond this many queued statements the queue is sent on its own: in blocking mode
    /// the server's replies to a long pipeline must not fill the socket while libpq is
    /// still writing to it.
    private static let queueLimit = 256
    /// A pipeline sent, its answers still to be read.
    private struct SentPipeline {
        let statements: [Statement]
        /// For each statement, whether the pipeline prepares it (its result comes first).
        let preparing: [StatementKey?]
    }

    /// The pipeline ``sendWithoutWaiting(_:)`` sent, until a call reads its answers.
    private var unanswered: SentPipeline?
    /// How many round trips this session has made (what the tests count).
    private(set) var roundTrips = 0

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
            throw PostgresFailure(sqlState: nil, message: message, connectionLost: true, neverConnected: true, credentialsRefused: refused,
                                  tlsFailed: Self.isTLSFailure(message))
        }
        // Server notices ("relation already exists, skipping") are not the caller's
        // business: libpq would print them to standard error.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Set per session, whatever the server's or role's default: a commit returns only
        // once its WAL is flushed on the server. Every statement is prepared and looks
        // rows up by key, so it is planned once for any value (a generic plan): a plan made
        // for one value uses the table's statistics of that value, and a vault created
        // since the last ANALYZE has none, which made the server read a lookup by primary
        // key through the by-service index, every row of the vault (measured: ~5 ms
        // instead of ~20 µs on a table of 300,000 rows, 10,000 of them the vault's).
        // Statements sent without `BEGIN` (a prepared set's pipeline, a lone read) run in
        // READ COMMITTED whatever the default, so a statement after a lock wait sees the
        // commit it waited for.
        try execute("""
            SET synchronous_commit = on; SET plan_cache_mode = force_generic_plan; \
            SET default_transaction_isolation = 'read committed'; SET lock_timeout = \(max(lockTimeoutMilliseconds, 1))
            """)
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the session is over: the server closed it (a restart, a failover, an
    /// administrator), which libpq learns when a call fails.
    var isEnded: Bool { PQstatus(handle) == CONNECTION_BAD }

    /// Whether a failed connection failed in TLS: the server's certificate did not verify
    /// against `sslrootcert`, named another host (`verify-full`), or the server offered no
    /// TLS where the connection string requires it. libpq says so only in its message;
    /// its English texts (the tests' locale) name "SSL" or the certificate. A libpq
    /// translated into another language may not, and such a failure is then reported as
    /// an unreachable server (`ECONNREFUSED`).
    static func isTLSFailure(_ message: String) -> Bool {
        message.contains("SSL") || message.contains("certificate")
    }

    /// Runs one or more statements without parameters (the simple protocol), after
    /// sending the queued ones.
    func execute(_ sql: String) throws(PostgresFailure) {
        try flush()
        try readUnanswered()
        roundTrips += 1
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Queues a statement whose result is only checked: it is sent with the next
    /// ``query(_:_:_:)`` or ``flush()``, and its failure is thrown there.
    /// - Parameter onRows: called with the statement's rows when it succeeds, for a read
    ///   whose answer can wait for the next round trip.
    func enqueue(_ sql: String, _ parameters: [Parameter] = [], onRows: ((PostgresRows) -> Void)? = nil) throws(PostgresFailure) {
        queued.append(Statement(sql: sql, parameters: parameters, onRows: onRows))
        if queued.count >= Self.queueLimit { try flush() }
    }

    /// How many statements wait to be sent.
    var queuedCount: Int { queued.count }

    /// Forgets the queued statements unsent (a transaction that rolls back anyway).
    func discardQueued() {
        queued.removeAll()
    }

    /// Sends the queued statements, in one round trip.
    func flush() throws(PostgresFailure) {
        guard !queued.isEmpty else { return }
        let statements = queued
        queued.removeAll()
        PQclear(try run(statements))
    }

    /// Runs one statement after the queued ones, in one round trip; its rows (binary) go
    /// to `body`, which may throw anything: its errors come back unchanged.
    func query<Result>(_ sql: String, _ parameters: [Parameter] = [], _ body: (PostgresRows) throws -> Result) throws -> Result {
        // Alone and prepared (a steady read): libpq's plain call, without pipeline mode's steps.
        if queued.isEmpty, let name = prepared[StatementKey(sql: sql, types: parameters.map(\.typeOID))] {
            try readUnanswered()
            roundTrips += 1
            let result = withEncoded(parameters) { count, values, lengths, formats in
                PQexecPrepared(handle, name, count, values, lengths, formats, 1)
            }
            defer { PQclear(result) }
            try check(result)
            return try body(PostgresRows(result: result!))
        }
        let statements = queued + [Statement(sql: sql, parameters: parameters)]
        queued.removeAll()
        let result = try run(statements)
        defer { PQclear(result) }
        return try body(PostgresRows(result: result))
    }

    /// Runs one statement and returns how many rows it changed.
    func change(_ sql: String, _ parameters: [Parameter]) throws -> Int {
        try query(sql, parameters) { rows in rows.changed }
    }

    // MARK: Pipelines

    /// Sends `statements` in one pipeline (preparing those this session has not), reads
    /// every result, and returns the last one, which the caller clears.
    private func run(_ statements: [Statement]) throws(PostgresFailure) -> OpaquePointer {
        roundTrips += 1
        let sent = try send(statements)
        // A pipeline sent without waiting answers first.
        try readEarlierAnswers()
        let (last, firstFailure) = try readAnswers(of: sent, keepingLast: true)
        guard PQexitPipelineMode(handle) == 1, let last else {
            PQclear(last)
            throw firstFailure ?? connectionFailure()
        }
        if let firstFailure {
            PQclear(last)
            throw firstFailure
        }
        return last
    }

    /// Sends the queued statements and `sql` without waiting for the answers, which the
    /// next call reads before its own: for a read-only transaction's `COMMIT`, whose
    /// answer changes nothing, so it costs no round trip (and, sent at once, leaves no
    /// session idle in a transaction). Its failure is not reported; a lost connection is,
    /// by the next call.
    func sendWithoutWaiting(_ sql: String) throws(PostgresFailure) {
        try readUnanswered()
        let statements = queued + [Statement(sql: sql, parameters: [])]
        queued.removeAll()
        unanswered = try send(statements)
    }

    /// Reads the answers of a pipeline sent without waiting, and leaves pipeline mode:
    /// before a call that does not use a pipeline.
    private func readUnanswered() throws(PostgresFailure) {
        guard try readEarlierAnswers() else { return }
        guard PQexitPipelineMode(handle) == 1 else { throw connectionFailure() }
    }

    /// Reads the answers of the pipeline ``sendWithoutWaiting(_:)`` sent, if any (its
    /// failure changes nothing), staying in pipeline mode; whether there was one.
    @discardableResult
    private func readEarlierAnswers() throws(PostgresFailure) -> Bool {
        guard let earlier = unanswered else { return false }
        unanswered = nil
        _ = try readAnswers(of: earlier, keepingLast: false)
        return true
    }

    /// Sends `statements` and a sync point, preparing those this session has not.
    private func send(_ statements: [Statement]) throws(PostgresFailure) -> SentPipeline {
        // A no-op when a pipeline sent without waiting is still unanswered.
        guard PQenterPipelineMode(handle) == 1 else { throw connectionFailure() }
        var preparing: [StatementKey?] = []
        for statement in statements {
            let key = StatementKey(sql: statement.sql, types: statement.parameters.map(\.typeOID))
            var name = prepared[key]
            var prepares: StatementKey?
            if name == nil {
                let new = "vk\(nextStatementNumber)"
                nextStatementNumber += 1
                guard PQsendPrepare(handle, new, statement.sql, Int32(key.types.count), key.types) == 1 else { throw abandonPipeline() }
                prepared[key] = new
                name = new
                prepares = key
            }
            preparing.append(prepares)
            let sent = withEncoded(statement.parameters) { count, values, lengths, formats in
                PQsendQueryPrepared(handle, name!, count, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw abandonPipeline() }
        }
        guard PQpipelineSync(handle) == 1 else { throw abandonPipeline() }
        return SentPipeline(statements: statements, preparing: preparing)
    }

    /// Reads `pipeline`'s answers up to its sync point: the last statement's result if
    /// `keepingLast` (the caller clears it), and the first failure.
    private func readAnswers(of pipeline: SentPipeline, keepingLast: Bool) throws(PostgresFailure) -> (last: OpaquePointer?, failure: PostgresFailure?) {
        var firstFailure: PostgresFailure?
        var last: OpaquePointer?
        for (index, prepares) in pipeline.preparing.enumerated() {
            if let prepares {
                let result = try nextResult()
                if PQresultStatus(result) != PGRES_COMMAND_OK {
                    // Not prepared (failed, or skipped after an earlier failure).
                    prepared[prepares] = nil
                    if firstFailure == nil, let failure = failure(of: result) { firstFailure = failure }
                }
                PQclear(result)
            }
            let result = try nextResult()
            if firstFailure == nil, let failure = failure(of: result) { firstFailure = failure }
            if firstFailure == nil, let onRows = pipeline.statements[index].onRows, PQresultStatus(result) == PGRES_TUPLES_OK {
                onRows(PostgresRows(result: result))
            }
            if keepingLast, index == pipeline.preparing.count - 1 { last = result } else { PQclear(result) }
        }
        let sync = PQgetResult(handle)
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced else {
            PQclear(last)
            throw firstFailure ?? connectionFailure()
        }
        return (last, firstFailure)
    }

    /// Calls `body` with the parameters in libpq's form: count, values, lengths, formats (binary).
    private func withEncoded<Result>(
        _ parameters: [Parameter],
        _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> Result
    ) -> Result {
        // One buffer for every value (never empty, so a zero-length value has an address).
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        for parameter in parameters {
            let start = buffer.count
            let present = parameter.encode(into: &buffer)
            offsets.append(present ? start : nil)
            lengths.append(Int32(buffer.count - start))
        }
        buffer.append(0)
        let formats = [Int32](repeating: 1, count: parameters.count)
        return buffer.withUnsafeBytes { bytes in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { bytes.baseAddress!.advanced(by: $0).assumingMemoryBound(to: CChar.self) }
            }
            return body(Int32(parameters.count), values, lengths, formats)
        }
    }

    /// The next command's result, and the end marker after it.
    private func nextResult() throws(PostgresFailure) -> OpaquePointer {
        guard let result = PQgetResult(handle) else { throw connectionFailure() }
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return result
    }

    /// A pipeline that could not be sent: the connection is broken.
    private func abandonPipeline() -> PostgresFailure {
        connectionFailure()
    }

    private func connectionFailure() -> PostgresFailure {
        PostgresFailure(sqlState: nil, message: Self.scrubbed(String(cString: PQerrorMessage(handle)), password: password), connectionLost: true)
    }

    /// The failure a result reports; `nil` for success and for a statement the server
    /// skipped after an earlier failure in the pipeline.
    private func failure(of result: OpaquePointer) -> PostgresFailure? {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_PIPELINE_ABORTED:
            return nil
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = Self.scrubbed(String(cString: PQresultErrorMessage(result)), password: password)
            return PostgresFailure(sqlState: sqlState, message: message, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
    }

    private func check(_ result: OpaquePointer?) throws(PostgresFailure) {
        guard let result else { throw connectionFailure() }
        if let failure = failure(of: result) { throw failure }
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
    /// TLS failed: the server could not be verified (see ``PostgresConnection/isTLSFailure(_:)``).
    var tlsFailed = false
}
