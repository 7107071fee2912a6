import VaultKit

/// Why an ``AuthClient`` is signed out: a ``Code``, and for a refusal what the server said
/// (an ``OAuthErrorCode``, an HTTP status) or a ``AuthErrorReason`` when it said nothing usable.
///
/// A struct rather than an enum so that a later VaultAuth can add reasons without breaking a
/// client's `switch`: switch over ``code`` with a `default`, or compare a whole reason
/// (`reason == .userSignedOut`, `reason == .refreshRefused(oauthError: .invalidGrant)`).
/// ``description`` is derived from the fields alone and never holds a token or the server's
/// free text.
public struct SignOutReason: Hashable, Sendable, CustomStringConvertible {
    /// How the client came to be signed out.
    public let code: Code
    /// The token endpoint's OAuth error code, for a refusal that had one (`invalid_grant`).
    public let oauthError: OAuthErrorCode?
    /// Why, for a refusal when neither ``oauthError`` nor ``httpStatus`` alone says it.
    public let reason: AuthErrorReason?
    /// The HTTP status of a refusal without an OAuth error code.
    public let httpStatus: Int?

    init(_ code: Code, oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.oauthError = oauthError
        self.reason = reason
        self.httpStatus = httpStatus
    }

    /// `code`, with what a strategy's refusal said.
    init(_ code: Code, refusal: StrategyError) {
        self.init(code, oauthError: refusal.oauthError, reason: refusal.reason, httpStatus: refusal.httpStatus)
    }

    /// How a client came to be signed out: a growable set of static members, so a new code
    /// is not a breaking change (switch over it with a `default`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `SignOutReason.Code.userSignedOut`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// There were no stored tokens.
        public static let neverSignedIn = Code(rawValue: "neverSignedIn")
        /// The app called ``AuthClient/signOut()``.
        public static let userSignedOut = Code(rawValue: "userSignedOut")
        /// The server refused the refresh and no login without the user was possible.
        public static let refreshRefused = Code(rawValue: "refreshRefused")
        /// The login with stored credentials was refused.
        public static let reloginRefused = Code(rawValue: "reloginRefused")
        /// Another device logged in to the account and took its single-device session.
        public static let sessionTakenOver = Code(rawValue: "sessionTakenOver")
        /// Another device holds the account's single-device session, so this login was refused.
        public static let loggedInOnAnotherDevice = Code(rawValue: "loggedInOnAnotherDevice")
        /// The tokens were deleted from the vault by someone else (another process signed out).
        public static let removedFromVault = Code(rawValue: "removedFromVault")
    }

    /// The refusal's detail in words: the OAuth error code, the reason, or the HTTP status.
    public var reasonText: String {
        authDetailText(oauthError: oauthError, reason: reason, httpStatus: httpStatus, fallback: code.description)
    }

    public var description: String {
        switch code {
        case .neverSignedIn: "not signed in"
        case .userSignedOut: "signed out by the user"
        case .refreshRefused: "refresh refused: \(reasonText)"
        case .reloginRefused: "login with stored credentials refused: \(reasonText)"
        case .sessionTakenOver: "logged in on another device"
        case .loggedInOnAnotherDevice: "the account is in use on another device"
        case .removedFromVault: "the tokens were removed from the vault (signed out elsewhere)"
        default: "signed out: \(code)"
        }
    }
}

// Members spelled like enum cases, so `.signedOut(.userSignedOut)` reads as an enum's would:
// the type is a struct so that it can gain reasons without breaking a client's `switch`.
extension SignOutReason {
    /// There were no stored tokens.
    public static let neverSignedIn = SignOutReason(.neverSignedIn)
    /// The app called ``AuthClient/signOut()``.
    public static let userSignedOut = SignOutReason(.userSignedOut)
    /// Another device logged in to the account and took its single-device session.
    public static let sessionTakenOver = SignOutReason(.sessionTakenOver)
    /// Another device holds the account's single-device session, so this login was refused.
    public static let loggedInOnAnotherDevice = SignOutReason(.loggedInOnAnotherDevice)
    /// The tokens were deleted from the vault by someone else (another process signed out).
    public static let removedFromVault = SignOutReason(.removedFromVault)

    /// The server refused the refresh, with what it said (`oauthError: .invalidGrant`) or why
    /// the client refused to ask (`.previouslyRefused`, `.noRefreshToken`).
    public static func refreshRefused(oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil,
                                      httpStatus: Int? = nil) -> SignOutReason {
        SignOutReason(.refreshRefused, oauthError: oauthError, reason: reason, httpStatus: httpStatus)
    }

    /// The server refused the refresh, for this reason: `.refreshRefused(.previouslyRefused)`.
    public static func refreshRefused(_ reason: AuthErrorReason) -> SignOutReason {
        refreshRefused(reason: reason)
    }

    /// The login with stored credentials was refused, with what the server said or why it
    /// could not be tried (`.noStoredCredentials`).
    public static func reloginRefused(oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil,
                                      httpStatus: Int? = nil) -> SignOutReason {
        SignOutReason(.reloginRefused, oauthError: oauthError, reason: reason, httpStatus: httpStatus)
    }

    /// The login with stored credentials was refused, for this reason: `.reloginRefused(.noStoredCredentials)`.
    public static func reloginRefused(_ reason: AuthErrorReason) -> SignOutReason {
        reloginRefused(reason: reason)
    }
}
