import Foundation
import Logging

extension AuthClient {
    /// Tuning for an ``AuthClient``.
    public struct Configuration: Sendable {
        /// Refresh when the access token expires within this many seconds (capped at half the
        /// token's lifetime), to absorb latency and clock drift.
        public var refreshLeeway: TimeInterval = 60
        /// At most this many early refreshes per ``refreshWindow``, whatever the server answers.
        ///
        /// A refresh is early when the tokens are not due yet: the server rejected a token the
        /// client believed valid, or ``refreshNow()`` was called. Due refreshes (within the
        /// leeway of the expiry, of tokens that live at least ``minimumScheduledLifetime``) are
        /// the schedule the server asked for and are not counted, so short-lived tokens in
        /// normal use never hit the cap. The count starts again at each sign-in.
        public var maxRefreshesPerWindow = 6
        /// The window for ``maxRefreshesPerWindow``.
        public var refreshWindow: Duration = .seconds(60)
        /// Tokens that live shorter than this are always refreshed as early ones (counted), so a
        /// server that hands out already-expired tokens cannot make every request refresh unchecked.
        public var minimumScheduledLifetime: TimeInterval = 2
        /// The single-device session contract, if the server has one.
        public var session: SingleDeviceSession?
        /// The wall clock that decides expiry (replace it in tests). Tokens are stamped with
        /// `Date()` when they arrive, so a replacement must move with real time (an offset
        /// from `Date()`), not stand still.
        public var now: @Sendable () -> Date = { Date() }
        /// Where the client logs what it does; never a token.
        public var logger = Logger(label: "VaultAuth")

        public init() {}
    }
}
