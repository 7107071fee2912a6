import Foundation

/// Where an ``AuthClient`` stands, as published by ``AuthClient/states()``.
public enum AuthState: Sendable, Hashable, CustomStringConvertible {
    /// Tokens are present and usable.
    case signedIn
    /// A refresh (or a fallback login) is in flight; requests wait for it.
    case refreshing
    /// No tokens; the reason says how it came to this.
    case signedOut(SignOutReason)

    public var description: String {
        switch self {
        case .signedIn: "signed in"
        case .refreshing: "refreshing"
        case .signedOut(let reason): "signed out (\(reason))"
        }
    }
}
