/// The hot standby a ``PostgresVaultStorage`` may read from
/// (``PostgresVaultLocation/readingFromStandby(_:maxStaleness:)``): its session, opened on
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
    /// Reads the standby answered, for the tests.
    var answered = 0

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
            connection = try PostgresConnection(conninfo: location.conninfo, password: location.password, lockTimeoutMilliseconds: lockTimeoutMilliseconds)
            retryAt = nil
        } catch {
            failed(at: now)
        }
        return connection
    }

    /// Drops the session; the standby is left alone for ``PostgresVaultLocation/standbyRetryDelay``.
    func failed(at now: ContinuousClock.Instant) {
        connection = nil
        retryAt = now + PostgresVaultLocation.standbyRetryDelay
    }
}
