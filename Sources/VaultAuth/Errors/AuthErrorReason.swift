/// Why a ``StrategyError`` or an ``AuthError`` happened when the server's own answer (an
/// ``OAuthErrorCode`` or an HTTP status) does not say it: a growable set of static members,
/// compared by identity rather than by text.
///
/// Each reason has a stable name (``rawValue``) and a fixed English text
/// (``description``) that never holds a value from the server or the caller. A strategy of
/// your own may name reasons of its own with ``init(rawValue:)``.
public struct AuthErrorReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason's stable name, as in `AuthErrorReason.network`.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    // Transient: might work later.
    /// No answer from the server (a connection or transport error).
    public static let network = AuthErrorReason(rawValue: "network")
    /// The caller's task was cancelled while it waited; a refresh it shared goes on.
    public static let cancelled = AuthErrorReason(rawValue: "cancelled")
    /// The token endpoint answered 200 with a body that is not a token response.
    public static let malformedTokenResponse = AuthErrorReason(rawValue: "malformedTokenResponse")
    /// The vault holding the stored credentials failed.
    public static let credentialStorageFailed = AuthErrorReason(rawValue: "credentialStorageFailed")

    // Refused without a server code.
    /// The tokens hold no refresh token.
    public static let noRefreshToken = AuthErrorReason(rawValue: "noRefreshToken")
    /// No user name and password are stored for the login without the user.
    public static let noStoredCredentials = AuthErrorReason(rawValue: "noStoredCredentials")
    /// The server refused this credential before; it is never presented again.
    public static let previouslyRefused = AuthErrorReason(rawValue: "previouslyRefused")

    // The single-device session endpoint broke its contract (AuthError.Code.sessionProtocol).
    /// A claim was accepted without a `session_id`.
    public static let claimWithoutSessionID = AuthErrorReason(rawValue: "claimWithoutSessionID")
    /// A claim was answered with an unexpected HTTP status.
    public static let unexpectedClaimStatus = AuthErrorReason(rawValue: "unexpectedClaimStatus")
    /// A keep-alive was answered with an unexpected HTTP status.
    public static let unexpectedKeepAliveStatus = AuthErrorReason(rawValue: "unexpectedKeepAliveStatus")
    /// A release was answered with an unexpected HTTP status.
    public static let unexpectedReleaseStatus = AuthErrorReason(rawValue: "unexpectedReleaseStatus")

    /// The texts of the reasons above, by name: the messages users saw before reasons were codes.
    private static let texts: [String: String] = [
        "network": "network error", "cancelled": "cancelled", "malformedTokenResponse": "malformed token response",
        "credentialStorageFailed": "credential storage failed", "noRefreshToken": "no refresh token",
        "noStoredCredentials": "no stored credentials", "previouslyRefused": "previously refused",
        "claimWithoutSessionID": "claim answer without session_id", "unexpectedClaimStatus": "claim answered",
        "unexpectedKeepAliveStatus": "keep-alive answered", "unexpectedReleaseStatus": "release answered",
    ]

    /// The reason in words; a reason of your own reads as its name.
    public var description: String { Self.texts[rawValue] ?? rawValue }
}

/// The words for a failure's detail, shared by ``StrategyError`` and ``AuthError``: the
/// server's OAuth error code, else the reason (with the HTTP status when there is one),
/// else the HTTP status alone, else `fallback`.
func authDetailText(oauthError: OAuthErrorCode?, reason: AuthErrorReason?, httpStatus: Int?, fallback: String) -> String {
    if let oauthError { return oauthError.rawValue }
    let status = httpStatus.map { "HTTP \($0)" }
    switch (reason, status) {
    case (let reason?, let status?): return "\(reason) \(status)"
    case (let reason?, nil): return reason.description
    case (nil, let status?): return status
    case (nil, nil): return fallback
    }
}
