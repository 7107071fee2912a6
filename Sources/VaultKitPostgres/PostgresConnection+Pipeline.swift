internal import CLibPQ

/// The pipeline protocol under ``PostgresConnection``'s calls: statements sent together
/// with one sync point, prepared on first use, and their answers read in order.
extension PostgresConnection {
    /// A statement and its parameters, waiting to be sent.
    struct Statement {
        let sql: String
        let parameters: [Parameter]
        /// Given the statement's rows, if it succeeds (a queued read whose answer is kept).
        var onRows: ((PostgresRows) -> Void)? = nil
    }

    /// What names a prepared statement: its text and its parameters' types.
    struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// A pipeline sent, its answers still to be read.
    struct SentPipeline {
        let statements: [Statement]
        /// For each statement, whether the pipeline prepares it (its result comes first).
        let preparing: [StatementKey?]
    }

    /// Sends `statements` in one pipeline (preparing those this session has not), reads
    /// every result, and returns the last one, which the caller clears.
    /// - Parameter barrier: `statements` end a transaction, and this statement (the
    ///   durability barrier, ``PostgresSQL/durabilityBarrier``) follows their sync point
    ///   as a transaction of its own, in the same round trip: it is answered once the WAL
    ///   is flushed past their commit. Its failure is thrown only when theirs succeeded.
    func run(_ statements: [Statement], then barrier: Statement? = nil) throws(PostgresFailure) -> OpaquePointer {
        precondition(!statements.isEmpty, "a pipeline without a statement has no result to return")
        roundTrips += 1
        let sent = try send(statements)
        let barrier = try barrier.map { statement throws(PostgresFailure) in try send([statement]) }
        // A pipeline sent without waiting answers first.
        try readEarlierAnswers()
        let (last, firstFailure) = try readAnswers(of: sent, keepingLast: true)
        var barrierFailure: PostgresFailure?
        if let barrier {
            do {
                barrierFailure = try readAnswers(of: barrier, keepingLast: false).failure
            } catch {
                PQclear(last)
                throw firstFailure ?? error
            }
        }
        guard PQexitPipelineMode(handle) == 1, let last else {
            PQclear(last)
            throw firstFailure ?? connectionFailure()
        }
        if let failure = firstFailure ?? barrierFailure {
            PQclear(last)
            throw failure
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
    func readUnanswered() throws(PostgresFailure) {
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
}
