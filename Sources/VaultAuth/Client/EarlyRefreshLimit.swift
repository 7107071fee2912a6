import Foundation

/// The cap on early refreshes: at most `limit` starts per `window`, whatever the server
/// answers, so a server that rejects every token cannot make a client refresh in a loop.
///
/// Only early refreshes count (see ``AuthClient/Configuration/isDue(_:)``): due ones are the
/// schedule the server asked for.
struct EarlyRefreshLimit: Sendable {
    let limit: Int
    let window: Duration
    /// Starts of early refreshes still inside the window.
    private var starts: [ContinuousClock.Instant] = []

    init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Records an early refresh starting `now`, or returns `false` (recording nothing) when
    /// the window is full.
    mutating func admit(at now: ContinuousClock.Instant = .now) -> Bool {
        starts.removeAll { now - $0 >= window }
        guard starts.count < limit else { return false }
        starts.append(now)
        return true
    }

    /// Starts counting again (at each sign-in).
    mutating func reset() {
        starts = []
    }
}

extension AuthClient.Configuration {
    /// Whether `tokens` are due for a scheduled refresh: within the leeway of an expiry the
    /// server announced, and not so short-lived that "due" would mean "always".
    func isDue(_ tokens: TokenSet) -> Bool {
        guard let expiresAt = tokens.expiresAt,
              expiresAt.timeIntervalSince(tokens.issuedAt) >= minimumScheduledLifetime else { return false }
        return tokens.expires(within: refreshLeeway, at: now())
    }
}
