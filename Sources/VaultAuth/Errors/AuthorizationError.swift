import VaultKit

/// Why the redirect of an ``AuthorizationRequest`` brought no usable code: a ``Code``, and
/// the server's ``OAuthErrorCode`` for ``Code/denied``.
///
/// A struct rather than an enum so that new checks (such as RFC 9207's issuer) can be added
/// without breaking a client's `switch`: switch over ``code`` with a `default`, or compare a
/// whole error (`#expect(throws: AuthorizationError.stateMismatch)`).
public struct AuthorizationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the redirect.
    public let code: Code
    /// The server's error code, for ``Code/denied``; `nil` when it sent none that
    /// ``OAuthErrorCode`` accepts.
    public let oauthError: OAuthErrorCode?

    init(_ code: Code, oauthError: OAuthErrorCode? = nil) {
        self.code = code
        self.oauthError = oauthError
    }

    /// What kind of failure an ``AuthorizationError`` is: a growable set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `AuthorizationError.Code.stateMismatch`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The URL is not the request's redirect URI.
        public static let wrongRedirect = Code(rawValue: "wrongRedirect")
        /// `state` is missing or not the request's: the redirect was forged or belongs to another request.
        public static let stateMismatch = Code(rawValue: "stateMismatch")
        /// The server or the user refused; see ``AuthorizationError/oauthError``.
        public static let denied = Code(rawValue: "denied")
        /// The redirect carries neither a code nor an error.
        public static let missingCode = Code(rawValue: "missingCode")
    }

    public var description: String {
        switch code {
        case .wrongRedirect: "the redirect is not this request's redirect URI"
        case .stateMismatch: "the redirect's state does not match the request (forged or stale)"
        case .denied: "authorization refused: \(oauthError?.rawValue ?? "unreadable error")"
        case .missingCode: "the redirect carries no authorization code"
        default: "authorization error \(code)"
        }
    }
}

// Members spelled like enum cases, so call sites read as an enum's would: the type is a
// struct so that it can gain codes without breaking a client's `switch`.
extension AuthorizationError {
    public static let wrongRedirect = AuthorizationError(.wrongRedirect)
    public static let stateMismatch = AuthorizationError(.stateMismatch)
    /// Refused, with the server's error code (`nil`: none it could read), for example ``OAuthErrorCode/accessDenied``.
    public static func denied(_ oauthError: OAuthErrorCode?) -> AuthorizationError { AuthorizationError(.denied, oauthError: oauthError) }
    public static let missingCode = AuthorizationError(.missingCode)

    /// Lets `catch AuthorizationError.stateMismatch` match an untyped error.
    public static func ~= (pattern: AuthorizationError, error: any Error) -> Bool {
        (error as? AuthorizationError) == pattern
    }
}
