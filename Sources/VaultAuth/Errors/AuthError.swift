import VaultKit

/// Everything ``AuthClient`` calls can fail with: a ``Code`` and the typed context it has.
///
/// A struct rather than an enum so that a later VaultAuth can add codes without breaking a
/// client's `switch`: switch over ``code`` with a `default`, or compare a whole error
/// (`catch AuthError.unauthorized`, `#expect(throws: AuthError.signedOut(.userSignedOut))`).
///
/// ``description`` is derived from the fields and never shows a token;
/// ``tokensNotPersisted(_:_:)`` carries the tokens themselves (in ``unpersistedTokens``,
/// redacted in every description) so they are not lost.
public struct AuthError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// The typed context, boxed: an error stays two words wide however much context it
    /// carries (a token set, a vault error), which keeps it cheap to throw and to capture.
    private let context: ErrorContext<Fields>?

    /// Why the client is signed out, for ``Code/signedOut``.
    public var signOutReason: SignOutReason? { context?.fields.signOutReason }
    /// Why, for ``Code/transient``, ``Code/configuration`` and ``Code/sessionProtocol``, when
    /// neither ``oauthError`` nor ``httpStatus`` alone says it.
    public var reason: Reason? { context?.fields.reason }
    /// The token endpoint's OAuth error code, for ``Code/configuration`` (`invalid_client`, ...).
    public var oauthError: OAuthErrorCode? { context?.fields.oauthError }
    /// The HTTP status the server answered, when it is the detail.
    public var httpStatus: Int? { context?.fields.httpStatus }
    /// The vault's failure, for ``Code/storage`` and ``Code/tokensNotPersisted``.
    public var storageError: TokenStoreError? { context?.fields.storageError }
    /// The new tokens that could not be written, for ``Code/tokensNotPersisted``; the client
    /// keeps using them in memory and retries the write on the next request.
    public var unpersistedTokens: TokenSet? { context?.fields.unpersistedTokens }

    public typealias Reason = AuthErrorReason

    private struct Fields: Hashable, Sendable {
        var signOutReason: SignOutReason?
        var reason: Reason?
        var oauthError: OAuthErrorCode?
        var httpStatus: Int?
        var storageError: TokenStoreError?
        var unpersistedTokens: TokenSet?
    }

    init(_ code: Code, signOutReason: SignOutReason? = nil, reason: Reason? = nil, oauthError: OAuthErrorCode? = nil,
         httpStatus: Int? = nil, storageError: TokenStoreError? = nil, unpersistedTokens: TokenSet? = nil) {
        self.code = code
        let fields = Fields(signOutReason: signOutReason, reason: reason, oauthError: oauthError, httpStatus: httpStatus,
                            storageError: storageError, unpersistedTokens: unpersistedTokens)
        context = .boxing(fields, unlessEqualTo: Fields())
    }

    /// A strategy's ``StrategyError/Code/transient`` or ``StrategyError/Code/configuration``
    /// failure, for the caller: the tokens were kept.
    init(keeping failure: StrategyError) {
        self.init(failure.code == .configuration ? .configuration : .transient,
                  reason: failure.reason, oauthError: failure.oauthError, httpStatus: failure.httpStatus)
    }

    /// What kind of failure an ``AuthError`` is: a growable set of static members, so a new
    /// code is not a breaking change (switch over it with a `default`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `AuthError.Code.signedOut`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// No tokens: sign in first. ``AuthError/signOutReason`` says why.
        public static let signedOut = Code(rawValue: "signedOut")
        /// A network error, 5xx or 429 while refreshing or sending; the tokens were kept.
        public static let transient = Code(rawValue: "transient")
        /// The token endpoint refused the client, not the credential: the client's
        /// configuration is wrong. The tokens were kept.
        public static let configuration = Code(rawValue: "configuration")
        /// The server still answered 401 after a refresh and one retry.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// More early refreshes were needed than the configured limit per window allows.
        public static let refreshLimitReached = Code(rawValue: "refreshLimitReached")
        /// New tokens were obtained but could not be written to the vault; they are in
        /// ``AuthError/unpersistedTokens``.
        public static let tokensNotPersisted = Code(rawValue: "tokensNotPersisted")
        /// The vault failed while reading or clearing tokens; see ``AuthError/storageError``.
        public static let storage = Code(rawValue: "storage")
        /// Another device holds this account's single-device session: this login was refused.
        public static let loggedInOnAnotherDevice = Code(rawValue: "loggedInOnAnotherDevice")
        /// Another device took this account's session; this device is signed out.
        public static let sessionTakenOver = Code(rawValue: "sessionTakenOver")
        /// The request was made in a session that ended (sign-out, new login) while it waited.
        public static let sessionChanged = Code(rawValue: "sessionChanged")
        /// The single-device session endpoint answered something the contract does not allow.
        public static let sessionProtocol = Code(rawValue: "sessionProtocol")
    }

    /// The detail in words: the OAuth error code, the reason, or the HTTP status.
    public var reasonText: String {
        authDetailText(oauthError: oauthError, reason: reason, httpStatus: httpStatus, fallback: code.description)
    }

    public var description: String {
        let storage = storageError.map { "\($0)" } ?? "token storage failed"
        switch code {
        case .signedOut: return "not signed in: \(signOutReason.map { "\($0)" } ?? "no tokens")"
        case .transient: return "temporary failure, tokens kept: \(reasonText)"
        case .configuration:
            return "the authorization server refused the client (\(reasonText)); check its configuration; tokens kept"
        case .unauthorized: return "the server rejected the request after a token refresh"
        case .refreshLimitReached: return "too many token refreshes in a short time; giving up for now"
        case .tokensNotPersisted: return "new tokens could not be saved (\(storage)); they are returned in this error"
        case .storage: return storage
        case .loggedInOnAnotherDevice: return "the account is logged in on another device"
        case .sessionTakenOver: return "another device logged in to this account; signed out"
        case .sessionChanged: return "the session ended while the request waited"
        case .sessionProtocol: return "unexpected session endpoint answer: \(reasonText)"
        default: return "authentication error \(code)"
        }
    }
}

// Members spelled like enum cases, so `throw .unauthorized` and
// `AuthError.signedOut(.userSignedOut)` read as an enum's would: the type is a struct so
// that it can gain codes without breaking a client's `switch`.
extension AuthError {
    /// No tokens, for this reason.
    public static func signedOut(_ reason: SignOutReason) -> AuthError { AuthError(.signedOut, signOutReason: reason) }
    /// A failure for now, for this reason (``AuthErrorReason/network``, ``AuthErrorReason/cancelled``, ...); tokens kept.
    public static func transient(_ reason: Reason) -> AuthError { AuthError(.transient, reason: reason) }
    /// A failure for now: the token endpoint answered 408, 429 or 5xx; tokens kept.
    public static func transient(httpStatus: Int) -> AuthError { AuthError(.transient, httpStatus: httpStatus) }
    /// The token endpoint refused the client with this OAuth error code; tokens kept.
    public static func configuration(oauthError: OAuthErrorCode) -> AuthError { AuthError(.configuration, oauthError: oauthError) }
    /// The token endpoint refused the request with this HTTP status and no OAuth error code.
    public static func configuration(httpStatus: Int) -> AuthError { AuthError(.configuration, httpStatus: httpStatus) }
    /// A fresh token was rejected too.
    public static let unauthorized = AuthError(.unauthorized)
    /// The cap on early refreshes was reached; tokens kept.
    public static let refreshLimitReached = AuthError(.refreshLimitReached)
    /// New `tokens` could not be written to the vault (`error`); they are kept in memory.
    public static func tokensNotPersisted(_ tokens: TokenSet, _ error: TokenStoreError) -> AuthError {
        AuthError(.tokensNotPersisted, storageError: error, unpersistedTokens: tokens)
    }
    /// The vault failed while reading or clearing tokens.
    public static func storage(_ error: TokenStoreError) -> AuthError { AuthError(.storage, storageError: error) }
    /// Another device holds this account's single-device session.
    public static let loggedInOnAnotherDevice = AuthError(.loggedInOnAnotherDevice)
    /// Another device took this account's session.
    public static let sessionTakenOver = AuthError(.sessionTakenOver)
    /// The session ended while the call waited.
    public static let sessionChanged = AuthError(.sessionChanged)
    /// The session endpoint broke its contract: `reason`, with the HTTP status it answered.
    public static func sessionProtocol(_ reason: Reason, httpStatus: Int? = nil) -> AuthError {
        AuthError(.sessionProtocol, reason: reason, httpStatus: httpStatus)
    }

    /// Lets `catch AuthError.unauthorized` match an untyped error.
    public static func ~= (pattern: AuthError, error: any Error) -> Bool {
        (error as? AuthError) == pattern
    }
}
