import Foundation

/// The tokens of one signed-in account at one issuer, as stored in the vault.
///
/// The expiry is absolute: it is computed from the server's `expires_in` at the moment
/// the response was received, on this machine's clock, so a server whose clock is off
/// does not make tokens look expired or fresh. ``AuthClient`` refreshes a little before
/// ``expiresAt`` (a leeway) to absorb network latency.
///
/// For example:
///
/// ```swift
/// let tokens = TokenSet(accessToken: access, refreshToken: refresh, expiresIn: 3600)
/// try store.save(tokens)
/// ```
///
/// `description` and `debugDescription` never show a token: only its type, scope, expiry
/// and whether a refresh token and session are present.
public struct TokenSet: Sendable, Hashable, Codable {
    /// The bearer token sent in `Authorization` headers.
    public var accessToken: String
    /// The token that buys a new access token, if the issuer gave one.
    public var refreshToken: String?
    /// The token type the issuer reported, usually `"Bearer"`.
    public var tokenType: String
    /// The granted scope, space-separated, if the issuer reported it.
    public var scope: String?
    /// When the access token was received.
    public var issuedAt: Date
    /// When the access token stops working, if the issuer said; `nil` means unknown
    /// (the client then refreshes only when the server answers 401).
    public var expiresAt: Date?
    /// The single-device session this login holds, if any.
    public var sessionID: String?

    public init(accessToken: String, refreshToken: String? = nil, tokenType: String = "Bearer", scope: String? = nil,
                issuedAt: Date = Date(), expiresAt: Date? = nil, sessionID: String? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = tokenType
        self.scope = scope
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.sessionID = sessionID
    }

    /// Tokens received now (or at `receivedAt`) with a relative lifetime in seconds, as in
    /// an OAuth 2.0 token response's `expires_in`.
    public init(accessToken: String, refreshToken: String? = nil, tokenType: String = "Bearer", scope: String? = nil,
                expiresIn: TimeInterval?, receivedAt: Date = Date(), sessionID: String? = nil) {
        self.init(accessToken: accessToken, refreshToken: refreshToken, tokenType: tokenType, scope: scope,
                  issuedAt: receivedAt, expiresAt: expiresIn.map { receivedAt.addingTimeInterval(max(0, $0)) },
                  sessionID: sessionID)
    }

    /// Whether the access token expires within `leeway` of `now`.
    ///
    /// The leeway is capped at half the token's lifetime, so an issuer that hands out
    /// tokens shorter than the leeway does not make every request refresh first.
    public func expires(within leeway: TimeInterval, at now: Date = Date()) -> Bool {
        guard let expiresAt else { return false }
        let lifetime = expiresAt.timeIntervalSince(issuedAt)
        let effective = lifetime > 0 ? min(leeway, lifetime / 2) : 0
        return now.addingTimeInterval(effective) >= expiresAt
    }

    /// Whether the access token is past its expiry at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt
    }

    /// The `Authorization` header value: the issuer's token type (normalised to `Bearer`
    /// for any capitalisation of it, RFC 6750) and the access token.
    var authorizationHeader: String {
        let type = tokenType.lowercased() == "bearer" ? "Bearer" : tokenType
        return "\(type) \(accessToken)"
    }
}

extension TokenSet: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        var parts = ["type: \(tokenType)", "access: redacted", "refresh: \(refreshToken == nil ? "none" : "redacted")"]
        if let scope { parts.append("scope: \(scope)") }
        if let expiresAt { parts.append("expires: \(expiresAt)") }
        parts.append("session: \(sessionID == nil ? "none" : "redacted")")
        return "TokenSet(\(parts.joined(separator: ", ")))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
