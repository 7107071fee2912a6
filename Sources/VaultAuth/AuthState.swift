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

/// Why the client is signed out.
public enum SignOutReason: Sendable, Hashable, CustomStringConvertible {
    /// There were no stored tokens.
    case neverSignedIn
    /// The app called ``AuthClient/signOut()``.
    case userSignedOut
    /// The server refused the refresh (the OAuth error code) and no login without the user was possible.
    case refreshRefused(String)
    /// The login with stored credentials was refused (the OAuth error code).
    case reloginRefused(String)
    /// Another device logged in to the account and took its single-device session.
    case sessionTakenOver
    /// Another device holds the account's single-device session, so this login was refused.
    case loggedInOnAnotherDevice
    /// The tokens were deleted from the vault by someone else (another process signed out).
    case removedFromVault

    public var description: String {
        switch self {
        case .neverSignedIn: "not signed in"
        case .userSignedOut: "signed out by the user"
        case .refreshRefused(let code): "refresh refused: \(code)"
        case .reloginRefused(let code): "login with stored credentials refused: \(code)"
        case .sessionTakenOver: "logged in on another device"
        case .loggedInOnAnotherDevice: "the account is in use on another device"
        case .removedFromVault: "the tokens were removed from the vault (signed out elsewhere)"
        }
    }
}
