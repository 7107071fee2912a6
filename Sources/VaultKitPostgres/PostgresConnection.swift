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
    let handle: OpaquePointer
    /// The password given in the connection string, if any: removed from every message.
    let password: String?
    /// The session's prepared statements. A new connection starts with none, so a
    /// reconnect never meets a name the server has forgotten.
    var prepared: [StatementKey: String] = [:]
    /// The number in the next prepared statement's name (never reused in a session).
    var nextStatementNumber = 0
    /// Statements whose results are only checked, sent with the next round trip.
    var queued: [Statement] = []
    /// Beyond this many queued statements the queue is sent on its own: in blocking mode
    /// the server's replies to a long pipeline must not fill the socket while libpq is
    /// still writing to it.
    private static let queueLimit = 256
    /// The pipeline ``sendWithoutWaiting(_:)`` sent, until a call reads its answers.
    var unanswered: SentPipeline?
    /// How many round trips this session has made (what the tests count).
    var roundTrips = 0
    /// Whether this session may run ``PostgresSQL/durabilityBarrier`` (its role may
    /// execute `pg_logical_emit_message`), read when it connects: then its write
    /// transactions commit without waiting for the WAL flush, and a barrier waits for it
    /// after the lock is released (``flushCommitting(barrier:)``).
    private(set) var hasDurabilityBarrier = false

    /// Connects and sets the session up: durable commits, the lock wait limit, UTF-8 text,
    /// and whether it may run the durability barrier.
    /// - Parameter defaults: libpq options used where `conninfo` does not set them.
    init(conninfo: String, password: String?, lockTimeoutMilliseconds: Int, defaults: KeyValuePairs<String, String> = [:]) throws(PostgresFailure) {
        self.password = password
        guard let handle = Self.connect(conninfo, defaults: defaults) else {
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
        // commit it waited for. Text travels as UTF-8 whatever the database's encoding or
        // the client's `PGCLIENTENCODING`, so every client stores a name as the same
        // characters and reads back the bytes it sent.
        // Whether the role may run the durability barrier is asked in the same round trip.
        try flush()
        roundTrips += 1
        let settings = PQexec(handle, PostgresSQL.sessionSettings(lockTimeoutMilliseconds: lockTimeoutMilliseconds))
        defer { PQclear(settings) }
        try check(settings)
        hasDurabilityBarrier = PQntuples(settings) == 1 && String(cString: PQgetvalue(settings, 0, 0)) == "t"
    }

    deinit {
        PQfinish(handle)
    }

    /// `PQconnectdb`, or with `defaults` first and then the connection string expanded in
    /// place of `dbname`, whose options override them (libpq's `expand_dbname`).
    private static func connect(_ conninfo: String, defaults: KeyValuePairs<String, String>) -> OpaquePointer? {
        if defaults.isEmpty { return PQconnectdb(conninfo) }
        let keywords = defaults.map(\.key) + ["dbname"]
        let values = defaults.map(\.value) + [conninfo]
        // NUL-terminated copies, freed once libpq has read them (the values hold the
        // connection string, password and all: overwritten before they are freed).
        func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
            let copies = strings.map { string in
                let bytes = Array(string.utf8CString)
                let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
                copy.initialize(from: bytes, count: bytes.count)
                return (copy, bytes.count)
            }
            defer {
                for (copy, count) in copies {
                    copy.update(repeating: 0, count: count)
                    copy.deallocate()
                }
            }
            return body(copies.map { UnsafePointer($0.0) } + [nil])
        }
        return withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
    }

    /// Whether the session is over: the server closed it (a restart, a failover, an
    /// administrator), which libpq learns when a call fails.
    var isEnded: Bool { PQstatus(handle) == CONNECTION_BAD }

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

    /// Queues what makes the transaction in progress commit without waiting for its WAL
    /// flush, when the session has the durability barrier that ``flushCommitting()``
    /// then sends behind the commit.
    func enqueueAsynchronousCommit() throws(PostgresFailure) {
        if hasDurabilityBarrier { try enqueue(PostgresSQL.asynchronousCommit) }
    }

    /// Sends the queued statements, which end with a transaction's commit, and, when the
    /// session has it, the durability barrier behind them, in one round trip: it returns
    /// once that commit is durable, though the transaction's locks were released as it
    /// committed (``PostgresSQL/asynchronousCommit``). A failed barrier (the session
    /// ended) leaves the commit's fate unknown, as a `COMMIT` without an answer would.
    /// - Returns: the barrier's transaction id (`nil`: no barrier, or not a number).
    @discardableResult
    func flushCommitting() throws(PostgresFailure) -> UInt64? {
        guard hasDurabilityBarrier else {
            try flush()
            return nil
        }
        let statements = queued
        queued.removeAll()
        var barrierTransaction: UInt64?
        let barrier = Statement(sql: PostgresSQL.durabilityBarrier, parameters: []) { rows in barrierTransaction = UInt64(rows.text(0, 1)) }
        // A full queue is sent as it fills (``enqueue(_:_:onRows:)``): when the `COMMIT`
        // was the statement that filled it, the commit is already answered and nothing is
        // left, so the barrier goes alone. Sent as an empty pipeline before it, the commit
        // that succeeded was reported as a lost connection.
        PQclear(try statements.isEmpty ? run([barrier]) : run(statements, then: barrier))
        return barrierTransaction
    }

    /// Runs the durability barrier alone: returns once every commit this session wrote or
    /// saw before it is durable. Without the barrier, every commit this role makes is
    /// synchronous: nothing to wait for.
    func awaitDurability() throws(PostgresFailure) {
        guard hasDurabilityBarrier else { return }
        try flush()
        PQclear(try run([Statement(sql: PostgresSQL.durabilityBarrier, parameters: [])]))
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
}

