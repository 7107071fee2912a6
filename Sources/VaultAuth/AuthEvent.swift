import VaultKit

/// Something an ``AuthClient`` did, as published by ``AuthClient/events()``: count refreshes,
/// refusals and lease changes for metrics without wrapping the transport. Never carries a
/// token or the server's free text.
///
/// A struct rather than an enum so that a later VaultAuth can publish new events without
/// breaking a client's `switch`: switch over ``code`` with a `default`, or compare a whole
/// event (`event == .refreshRefused(oauthError: .invalidGrant)`).
public struct AuthEvent: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public let code: Code
    /// Why the client signed out, for ``Code/signedOut``.
    public let signOutReason: SignOutReason?
    /// The token endpoint's OAuth error code, for a refusal or a failure that had one.
    public let oauthError: OAuthErrorCode?
    /// Why, when neither ``oauthError`` nor ``httpStatus`` alone says it (``AuthErrorReason/network``, ...).
    public let reason: AuthErrorReason?
    /// The HTTP status the token endpoint answered, when it is the detail.
    public let httpStatus: Int?

    init(_ code: Code, signOutReason: SignOutReason? = nil, oauthError: OAuthErrorCode? = nil,
         reason: AuthErrorReason? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.signOutReason = signOutReason
        self.oauthError = oauthError
        self.reason = reason
        self.httpStatus = httpStatus
    }

    /// `code`, with what a strategy's failure said.
    init(_ code: Code, failure: StrategyError) {
        self.init(code, oauthError: failure.oauthError, reason: failure.reason, httpStatus: failure.httpStatus)
    }

    /// What an ``AuthEvent`` reports: a growable set of static members, so a new event is
    /// not a breaking change (switch over it with a `default`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `AuthEvent.Code.refreshed`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Tokens were stored by a sign-in.
        public static let signedIn = Code(rawValue: "signedIn")
        /// This process got new tokens from the token endpoint (a refresh, or a login without
        /// the user after a refused refresh) and stored them.
        public static let refreshed = Code(rawValue: "refreshed")
        /// Another process sharing the vault had refreshed already: its tokens were used and
        /// no token request was made.
        public static let adoptedTokensFromVault = Code(rawValue: "adoptedTokensFromVault")
        /// The token endpoint refused the credential.
        public static let refreshRefused = Code(rawValue: "refreshRefused")
        /// The token endpoint refused the client's configuration; tokens kept.
        public static let configurationError = Code(rawValue: "configurationError")
        /// The refresh failed for now (network, 5xx, 429); tokens kept.
        public static let refreshFailed = Code(rawValue: "refreshFailed")
        /// Too many early refreshes in the window; no request was made.
        public static let refreshLimitReached = Code(rawValue: "refreshLimitReached")
        /// The client signed out; ``AuthEvent/signOutReason`` says why.
        public static let signedOut = Code(rawValue: "signedOut")
        /// A single-device lease was claimed.
        public static let leaseClaimed = Code(rawValue: "leaseClaimed")
        /// The lease was renewed.
        public static let leaseRenewed = Code(rawValue: "leaseRenewed")
        /// The lease was released.
        public static let leaseReleased = Code(rawValue: "leaseReleased")
        /// The server refused or took over the lease.
        public static let leaseLost = Code(rawValue: "leaseLost")
    }

    /// The detail in words: the OAuth error code, the reason, or the HTTP status.
    public var reasonText: String {
        authDetailText(oauthError: oauthError, reason: reason, httpStatus: httpStatus, fallback: code.description)
    }

    public var description: String {
        switch code {
        case .signedIn: "signed in"
        case .refreshed: "refreshed"
        case .adoptedTokensFromVault: "used tokens another process refreshed"
        case .refreshRefused: "refresh refused: \(reasonText)"
        case .configurationError: "client configuration refused: \(reasonText)"
        case .refreshFailed: "refresh failed for now: \(reasonText)"
        case .refreshLimitReached: "refresh limit reached"
        case .signedOut: "signed out: \(signOutReason.map { "\($0)" } ?? "no tokens")"
        case .leaseClaimed: "lease claimed"
        case .leaseRenewed: "lease renewed"
        case .leaseReleased: "lease released"
        case .leaseLost: "lease lost"
        default: "\(code)"
        }
    }
}

// Members spelled like enum cases, so `emit(.refreshed)` and `.signedOut(reason)` read as
// an enum's would: the type is a struct so that it can gain events without breaking a
// client's `switch`.
extension AuthEvent {
    /// Tokens were stored by a sign-in.
    public static let signedIn = AuthEvent(.signedIn)
    /// New tokens from the token endpoint were stored.
    public static let refreshed = AuthEvent(.refreshed)
    /// Another process's refreshed tokens were used; no token request was made.
    public static let adoptedTokensFromVault = AuthEvent(.adoptedTokensFromVault)
    /// Too many early refreshes in the window; no request was made.
    public static let refreshLimitReached = AuthEvent(.refreshLimitReached)
    /// A single-device lease was claimed.
    public static let leaseClaimed = AuthEvent(.leaseClaimed)
    /// The lease was renewed.
    public static let leaseRenewed = AuthEvent(.leaseRenewed)
    /// The lease was released.
    public static let leaseReleased = AuthEvent(.leaseReleased)
    /// The server refused or took over the lease.
    public static let leaseLost = AuthEvent(.leaseLost)

    /// The client signed out, for this reason.
    public static func signedOut(_ reason: SignOutReason) -> AuthEvent { AuthEvent(.signedOut, signOutReason: reason) }

    /// The token endpoint refused the credential, with what it said (`oauthError: .invalidGrant`)
    /// or why the client did not ask (`reason: .previouslyRefused`).
    public static func refreshRefused(oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil,
                                      httpStatus: Int? = nil) -> AuthEvent {
        AuthEvent(.refreshRefused, oauthError: oauthError, reason: reason, httpStatus: httpStatus)
    }

    /// The token endpoint refused the client's configuration (`oauthError: .invalidClient`); tokens kept.
    public static func configurationError(oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil,
                                          httpStatus: Int? = nil) -> AuthEvent {
        AuthEvent(.configurationError, oauthError: oauthError, reason: reason, httpStatus: httpStatus)
    }

    /// The refresh failed for now (`reason: .network`, `httpStatus: 503`); tokens kept.
    public static func refreshFailed(oauthError: OAuthErrorCode? = nil, reason: AuthErrorReason? = nil,
                                     httpStatus: Int? = nil) -> AuthEvent {
        AuthEvent(.refreshFailed, oauthError: oauthError, reason: reason, httpStatus: httpStatus)
    }
}
