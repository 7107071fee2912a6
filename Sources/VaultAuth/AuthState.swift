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

/// Everything ``AuthClient`` calls can fail with. No case carries a token's text in its
/// description; ``tokensNotPersisted(_:_:)`` carries the tokens themselves (redacted in
/// `description`) so they are not lost.
public enum AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No tokens: sign in first. The reason says why the client is signed out.
    case signedOut(SignOutReason)
    /// A network error, 5xx or 429 while refreshing or sending; the tokens were kept.
    case transient(String)
    /// The token endpoint refused the client, not the credential (`invalid_client`,
    /// `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, ...): the client's
    /// configuration is wrong. The tokens were kept.
    case configuration(String)
    /// The server still answered 401 after a refresh and one retry.
    case unauthorized
    /// More early refreshes (of tokens not yet due) were needed than the configured limit per
    /// window allows; the tokens were kept.
    case refreshLimitReached
    /// New tokens were obtained but could not be written to the vault. They are here, and
    /// the client keeps using them in memory and retries the write on the next request.
    case tokensNotPersisted(TokenSet, TokenStoreError)
    /// The vault failed while reading or clearing tokens.
    case storage(TokenStoreError)
    /// Another device holds this account's single-device session: this login was refused.
    case loggedInOnAnotherDevice
    /// Another device took this account's session; this device is signed out.
    case sessionTakenOver
    /// The request was made in a session that ended (sign-out, new login) while it waited.
    case sessionChanged
    /// The single-device session endpoint answered something the contract does not allow.
    case sessionProtocol(String)

    public var description: String {
        switch self {
        case .signedOut(let reason): "not signed in: \(reason)"
        case .transient(let reason): "temporary failure, tokens kept: \(reason)"
        case .configuration(let code): "the authorization server refused the client (\(code)); check its configuration; tokens kept"
        case .unauthorized: "the server rejected the request after a token refresh"
        case .refreshLimitReached: "too many token refreshes in a short time; giving up for now"
        case .tokensNotPersisted(_, let error): "new tokens could not be saved (\(error)); they are returned in this error"
        case .storage(let error): "\(error)"
        case .loggedInOnAnotherDevice: "the account is logged in on another device"
        case .sessionTakenOver: "another device logged in to this account; signed out"
        case .sessionChanged: "the session ended while the request waited"
        case .sessionProtocol(let reason): "unexpected session endpoint answer: \(reason)"
        }
    }
}
