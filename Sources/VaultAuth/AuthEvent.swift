import Foundation

/// Something an ``AuthClient`` did, as published by ``AuthClient/events()``: count refreshes,
/// refusals and lease changes for metrics without wrapping the transport. Never carries a token.
public enum AuthEvent: Sendable, Hashable, CustomStringConvertible {
    /// Tokens were stored by a sign-in.
    case signedIn
    /// This process got new tokens from the token endpoint (a refresh, or a login without the
    /// user after a refused refresh) and stored them.
    case refreshed
    /// Another process sharing the vault had refreshed already: its tokens were used and no
    /// token request was made.
    case adoptedTokensFromVault
    /// The token endpoint refused the credential (the OAuth error code).
    case refreshRefused(String)
    /// The token endpoint refused the client's configuration (the OAuth error code); tokens kept.
    case configurationError(String)
    /// The refresh failed for now (network, 5xx, 429); tokens kept.
    case refreshFailed(String)
    /// Too many early refreshes in the window; no request was made.
    case refreshLimitReached
    /// The client signed out, for this reason.
    case signedOut(SignOutReason)
    /// A single-device lease was claimed.
    case leaseClaimed
    /// The lease was renewed.
    case leaseRenewed
    /// The lease was released.
    case leaseReleased
    /// The server refused or took over the lease.
    case leaseLost

    public var description: String {
        switch self {
        case .signedIn: "signed in"
        case .refreshed: "refreshed"
        case .adoptedTokensFromVault: "used tokens another process refreshed"
        case .refreshRefused(let code): "refresh refused: \(code)"
        case .configurationError(let code): "client configuration refused: \(code)"
        case .refreshFailed(let reason): "refresh failed for now: \(reason)"
        case .refreshLimitReached: "refresh limit reached"
        case .signedOut(let reason): "signed out: \(reason)"
        case .leaseClaimed: "lease claimed"
        case .leaseRenewed: "lease renewed"
        case .leaseReleased: "lease released"
        case .leaseLost: "lease lost"
        }
    }
}
