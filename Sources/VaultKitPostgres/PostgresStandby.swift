/// The hot standby a ``PostgresVaultStorage`` may read from
/// (``PostgresVaultLocation/readingFromStandby(_:maxStaleness:statistics:)``): its session, opened on
/// first use, and when the primary last showed the vault state the storage holds.
final class PostgresStandby {
    let location: PostgresVaultLocation.Standby
    /// `nil` until first used, and after a failure.
    var connection: PostgresConnection?
    /// After a failure: no attempt before then.
    var retryAt: ContinuousClock.Instant?
    /// When a statement that showed the primary the vault state now held was sent: a
    /// standby answers only within ``PostgresVaultLocation/Standby/maxStaleness`` of it.
    var primarySeenAt: ContinuousClock.Instant?
    /// Where what it does is counted (the caller's, or one of its own).
    var statistics: PostgresStandbyStatistics { location.statistics }
    /// Reads it answered (with every other handle counted in the same statistics).
    var answered: Int { statistics.snapshot.answered }

    /// Bounds on a standby that does not answer, where its connection string sets none:
    /// a read that tries it waits at most this long before the primary answers
    /// (`connect_timeout` in seconds: connecting; `tcp_user_timeout` in milliseconds: a
    /// host gone from the network under a statement; without them the first bound is
    /// none, and the second the kernel's retransmissions, about a quarter of an hour).
    static let connectionDefaults: KeyValuePairs<String, String> = ["connect_timeout": "2", "tcp_user_timeout": "2000"]
    /// A server that answers slowly: its statements are cancelled after 2 s (a lone read
    /// of one row by its key).
    static let sessionSettings = "SET statement_timeout = 2000"

    init(_ location: PostgresVaultLocation.Standby) {
        self.location = location
    }

    /// Whether the bound still allows an answer from the standby now.
    func withinBound(at now: ContinuousClock.Instant) -> Bool {
        guard let primarySeenAt else { return false }
        return now - primarySeenAt < location.maxStaleness
    }

    /// The session, connected if it is not (`nil` while a failure's delay runs, or when
    /// connecting fails: then the delay starts).
    func session(at now: ContinuousClock.Instant, lockTimeoutMilliseconds: Int) -> PostgresConnection? {
        if let connection, !connection.isEnded { return connection }
        connection = nil
        if let retryAt, now < retryAt { return nil }
        do {
            let session = try PostgresConnection(conninfo: location.conninfo, password: location.password,
                                                 lockTimeoutMilliseconds: lockTimeoutMilliseconds, defaults: Self.connectionDefaults)
            try session.execute(Self.sessionSettings)
            connection = session
            retryAt = nil
        } catch {
            failed(error, at: now)
        }
        return connection
    }

    /// Drops the session; the standby is left alone for ``PostgresVaultLocation/standbyRetryDelay``.
    func failed(_ error: any Error, at now: ContinuousClock.Instant) {
        connection = nil
        retryAt = now + PostgresVaultLocation.standbyRetryDelay
        // libpq's or the server's message, with the standby's password removed
        // (``PostgresFailure``); nothing else is thrown there.
        let message = (error as? PostgresFailure)?.message ?? ""
        statistics.failed(message.isEmpty ? "the standby failed" : message)
    }
}
