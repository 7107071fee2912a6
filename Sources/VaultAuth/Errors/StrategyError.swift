import VaultKit

/// Why a strategy could not produce new tokens: a ``Code`` saying what the client should do
/// about it, and what the server said (an ``OAuthErrorCode``, an HTTP status) or a
/// ``Reason`` when it said nothing usable.
///
/// A struct rather than an enum so that a later VaultAuth can add codes without breaking a
/// strategy's or a caller's `switch`: switch over ``code`` with a `default`, or compare a
/// whole error (`#expect(throws: StrategyError.refused(oauthError: .invalidGrant))`).
/// Never carries a token, a password or the server's free text; ``description`` is derived
/// from the fields alone.
public struct StrategyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is, and so what the client does with the tokens.
    public let code: Code
    /// Why, when neither ``oauthError`` nor ``httpStatus`` alone says it.
    public let reason: Reason?
    /// The server's OAuth error code, for example ``OAuthErrorCode/invalidGrant``.
    public let oauthError: OAuthErrorCode?
    /// The HTTP status the server answered, when it is the detail (a 503, a 400 without a code).
    public let httpStatus: Int?

    public typealias Reason = AuthErrorReason

    init(_ code: Code, reason: Reason? = nil, oauthError: OAuthErrorCode? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.reason = reason
        self.oauthError = oauthError
        self.httpStatus = httpStatus
    }

    /// What kind of failure a ``StrategyError`` is: a growable set of static members, so a
    /// new code is not a breaking change (switch over it with a `default`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `StrategyError.Code.refused`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The server refused the credential for good (`invalid_grant`): it is never presented again.
        public static let refused = Code(rawValue: "refused")
        /// The network or the server failed for now (no answer, 5xx, 429); the tokens stay.
        public static let transient = Code(rawValue: "transient")
        /// The server refused the request, not the credential: the client's setup is wrong. The
        /// tokens stay; signing the user out would not fix it.
        public static let configuration = Code(rawValue: "configuration")
        /// The account's session was taken over by another device.
        public static let sessionTakenOver = Code(rawValue: "sessionTakenOver")
        /// This strategy cannot do that (for example log in again without the user).
        public static let unsupported = Code(rawValue: "unsupported")
    }

    /// The detail in words: the OAuth error code, the reason, or the HTTP status (never
    /// anything else the server sent). The texts a ``SignOutReason`` and an ``AuthEvent`` carry.
    public var reasonText: String {
        authDetailText(oauthError: oauthError, reason: reason, httpStatus: httpStatus, fallback: code.description)
    }

    public var description: String {
        switch code {
        case .refused: "the server refused the credential (\(reasonText))"
        case .transient: "temporary failure: \(reasonText)"
        case .configuration: "the server refused the client's request (\(reasonText)); check the client configuration"
        case .sessionTakenOver: "the session was taken over by another device"
        case .unsupported: "not supported by this strategy"
        default: "strategy error \(code): \(reasonText)"
        }
    }
}

// The spellings a strategy throws, so `throw .refused(oauthError: .invalidGrant)` stays short.
extension StrategyError {
    /// The server said the credential is dead, with its OAuth error code (`invalid_grant`).
    public static func refused(oauthError: OAuthErrorCode) -> StrategyError { StrategyError(.refused, oauthError: oauthError) }
    /// The server refused the credential with this HTTP status and no OAuth error code.
    public static func refused(httpStatus: Int) -> StrategyError { StrategyError(.refused, httpStatus: httpStatus) }
    /// The credential cannot be used, for this reason (``AuthErrorReason/noRefreshToken``, ...).
    public static func refused(_ reason: Reason) -> StrategyError { StrategyError(.refused, reason: reason) }
    /// It may work later: no answer (``AuthErrorReason/network``), an unreadable answer, ...
    public static func transient(_ reason: Reason) -> StrategyError { StrategyError(.transient, reason: reason) }
    /// It may work later: the server answered 408, 429 or 5xx.
    public static func transient(httpStatus: Int) -> StrategyError { StrategyError(.transient, httpStatus: httpStatus) }
    /// The server refused the client with this OAuth error code (`invalid_client`, ...).
    public static func configuration(oauthError: OAuthErrorCode) -> StrategyError {
        StrategyError(.configuration, oauthError: oauthError)
    }
    /// The server refused the request with this HTTP status and no OAuth error code.
    public static func configuration(httpStatus: Int) -> StrategyError { StrategyError(.configuration, httpStatus: httpStatus) }
    /// The account's session was taken over by another device.
    public static let sessionTakenOver = StrategyError(.sessionTakenOver)
    /// This strategy cannot do that.
    public static let unsupported = StrategyError(.unsupported)
}

extension StrategyError {
    /// Lets `catch StrategyError.unsupported` match an untyped error.
    public static func ~= (pattern: StrategyError, error: any Error) -> Bool {
        (error as? StrategyError) == pattern
    }
}
