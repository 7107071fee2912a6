/// Credentials the server refused (`invalid_grant`), remembered so they are never presented
/// again: a refused refresh token sent twice can trip the server's reuse detection.
///
/// Kept as fingerprints (process-local hashes, seeded per process by `Hasher`), never the
/// tokens themselves.
struct RefusedCredentials: Sendable {
    private var fingerprints: Set<Int> = []

    mutating func insert(_ tokens: TokenSet) {
        fingerprints.insert(Self.fingerprint(tokens))
    }

    func contains(_ tokens: TokenSet) -> Bool {
        fingerprints.contains(Self.fingerprint(tokens))
    }

    /// The credential a refresh presents: the refresh token, or the access token without one.
    private static func fingerprint(_ tokens: TokenSet) -> Int {
        var hasher = Hasher()
        hasher.combine(tokens.refreshToken ?? tokens.accessToken)
        return hasher.finalize()
    }
}
