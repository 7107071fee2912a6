import VaultKit

/// Reads from a hot standby (a streaming replica of the vault's server).
///
/// Why only this much: the engine's checks (row versions, the manifest, the rollback
/// guard) assume one server whose states only move forward, and a standby's lag moves
/// them back. So a standby answers only what changes none of them: a lone `get` of a
/// row whose vault state and row version are exactly the ones this handle verified on
/// the primary, within `maxStaleness` of the primary last showing that state. Anything
/// else (a standby behind or ahead of that state, unreachable, or past the bound) is
/// read from the primary, as without a standby (docs/POSTGRES.md, "Reads from a hot
/// standby").
extension PostgresVaultLocation {
    /// A hot standby that may answer reads, and how stale an answer may be.
    /// Like the location, it never shows its connection string, which may hold a password.
    public struct Standby: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        let conninfo: String
        let password: String?
        /// The longest time between the primary showing the state a read returns and the
        /// read: a standby answers only within it.
        public let maxStaleness: Duration
        /// `postgres://user@host:port/database`, without the password.
        public let description: String
        /// Where what the standby did is counted (``PostgresStandbyStatistics``).
        public let statistics: PostgresStandbyStatistics

        public var debugDescription: String { description }

        public var customMirror: Mirror {
            Mirror(self, children: ["description": description, "maxStaleness": maxStaleness], displayStyle: .struct)
        }
    }

    /// This location, with `get`s answered by the hot standby at `connection` (a libpq
    /// URL or `key=value` string, as for the primary) when the answer is the state this
    /// handle verified on the primary at most `maxStaleness` ago. A read never fails
    /// because of the standby: one it cannot answer goes to the primary, and a standby
    /// that fails is tried again after ``standbyRetryDelay``. One that does not answer
    /// holds a read for at most 2 s: `connect_timeout=2` and `tcp_user_timeout=2000`
    /// unless `connection` sets them, and statements cancelled after 2 s.
    ///
    /// A standby that cannot answer never shows as an error, so pass `statistics` to see
    /// what it does: how many `get`s it answered, why the others went to the primary,
    /// and its last failure.
    ///
    /// - Throws: `VaultError.invalidArgument(_:)`: `.notAConnectionString`, or
    ///   `.standbyStalenessNotPositive`.
    public func readingFromStandby(
        _ connection: String, maxStaleness: Duration, statistics: PostgresStandbyStatistics = PostgresStandbyStatistics()
    ) throws(VaultError) -> PostgresVaultLocation {
        guard maxStaleness > .zero else { throw .invalidArgument(.standbyStalenessNotPositive) }
        let values = try Self.options(connection)
        var location = self
        location.standby = Standby(conninfo: connection, password: values["password"], maxStaleness: maxStaleness,
                                   description: Self.server(values), statistics: statistics)
        return location
    }

    /// How long a standby that failed (to connect, or a statement) is left alone.
    public static let standbyRetryDelay = Duration.seconds(5)
}
