import Synchronization

/// What a hot standby did for the handles that were given this object
/// (``PostgresVaultLocation/readingFromStandby(_:maxStaleness:statistics:)``): how many
/// `get`s it answered, why the others went to the primary, and its last failure.
///
/// Why it exists: a standby never fails a read, it only stops being used, so without
/// these counts a standby that is misconfigured (a wrong password, a server without the
/// tables), unreachable or always behind looks exactly like one that works. Read
/// ``snapshot`` from any thread, for a metrics endpoint or a health check; one object may
/// be shared by many handles, whose counts then add up.
public final class PostgresStandbyStatistics: Sendable, CustomStringConvertible {
    /// The counts at one moment.
    public struct Snapshot: Sendable, Equatable, CustomStringConvertible {
        /// `get`s the standby answered.
        public var answered = 0
        /// `get`s it was asked and could not answer: it showed another vault state or
        /// another row version than the one verified (it lags, or is ahead of this handle).
        public var notCaughtUp = 0
        /// `get`s sent to the primary without asking the standby, because the primary last
        /// showed the state held longer ago than `maxStaleness` (one per bound, at least,
        /// for a handle that reads steadily).
        public var pastBound = 0
        /// `get`s the standby could not serve because it failed: just then (to connect,
        /// or its statement), or less than ``PostgresVaultLocation/standbyRetryDelay``
        /// before (then it is not asked).
        public var unavailable = 0
        /// Failures to connect to the standby or of a statement on it; each leaves it
        /// alone for ``PostgresVaultLocation/standbyRetryDelay``.
        public var failures = 0
        /// The last failure's message, any password in it removed (`nil`: none yet).
        public var lastFailure: String?

        public init() {}

        public var description: String {
            "answered \(answered), not caught up \(notCaughtUp), past the bound \(pastBound), unavailable \(unavailable), failures \(failures)"
                + (lastFailure.map { ", last failure: \($0)" } ?? "")
        }
    }

    /// What happened to one `get` that a standby could have answered.
    enum Outcome {
        case answered, notCaughtUp, pastBound, unavailable
    }

    private let counts = Mutex(Snapshot())

    public init() {}

    /// The counts now.
    public var snapshot: Snapshot { counts.withLock { $0 } }

    public var description: String { snapshot.description }

    func count(_ outcome: Outcome) {
        counts.withLock { counts in
            switch outcome {
            case .answered: counts.answered += 1
            case .notCaughtUp: counts.notCaughtUp += 1
            case .pastBound: counts.pastBound += 1
            case .unavailable: counts.unavailable += 1
            }
        }
    }

    func failed(_ message: String) {
        counts.withLock { counts in
            counts.failures += 1
            counts.lastFailure = message
        }
    }
}
