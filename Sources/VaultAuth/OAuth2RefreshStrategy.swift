import Foundation

/// The OAuth 2.0 refresh-token grant (RFC 6749 section 6), with optional token
/// revocation at sign-out (RFC 7009) and an optional fallback login.
///
/// For example:
///
/// ```swift
/// let strategy = OAuth2RefreshStrategy(
///     tokenEndpoint: URL(string: "https://auth.example.com/oauth/token")!,
///     client: .none(clientID: "cli"),
///     revocationEndpoint: URL(string: "https://auth.example.com/oauth/revoke")!)
/// ```
///
/// A refresh is a form-encoded POST of `grant_type=refresh_token&refresh_token=...` with
/// the client's authentication. `invalid_grant` is a refusal (the refresh token is dead);
/// any other OAuth error (`invalid_client`, `unauthorized_client`, `unsupported_grant_type`,
/// `invalid_scope`, ...) is a configuration error that keeps the tokens; `408`, `429`, `5xx`
/// and network errors are transient.
public struct OAuth2RefreshStrategy: AuthStrategy {
    /// The token endpoint.
    public let tokenEndpoint: URL
    /// The RFC 7009 revocation endpoint, if the server has one.
    public let revocationEndpoint: URL?
    /// How the client authenticates to both endpoints.
    public let client: ClientAuthentication
    /// A login that works without the user (stored credentials), used when a refresh is refused.
    public let fallback: StoredCredentialsStrategy?
    /// The statuses of an API response that mean "this access token was rejected": `[401]` by
    /// default; add 403 for servers whose protected resources answer a bad token with it.
    public var rejectedTokenStatuses: Set<Int>

    public init(tokenEndpoint: URL, client: ClientAuthentication, revocationEndpoint: URL? = nil, fallback: StoredCredentialsStrategy? = nil,
                rejectedTokenStatuses: Set<Int> = AuthFailure.defaultRejectedTokenStatuses) {
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.client = client
        self.fallback = fallback
        self.rejectedTokenStatuses = rejectedTokenStatuses
    }

    public func authFailure(in response: HTTPResponse, for request: HTTPRequest) -> AuthFailure {
        AuthFailure.classify(response, rejectedTokenStatuses: rejectedTokenStatuses)
    }

    /// Whether `tokens` hold a refresh token. Tokens without one (client-credentials tokens
    /// usually have none) are used until they expire or are rejected; ``ClientCredentialsStrategy``
    /// renews those instead.
    public func canRefresh(_ tokens: TokenSet) -> Bool { tokens.refreshToken != nil }

    public func refresh(_ tokens: TokenSet, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        guard let refreshToken = tokens.refreshToken else { throw .refused(.noRefreshToken) }
        return try await TokenEndpoint(url: tokenEndpoint, client: client)
            .grant([("grant_type", "refresh_token"), ("refresh_token", refreshToken)], previous: tokens, transport: transport)
    }

    public var canRelogin: Bool { fallback != nil }

    public func relogin(transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        guard let fallback else { throw .unsupported }
        return try await fallback.relogin(transport: transport)
    }

    /// Revokes the refresh token (which, per RFC 7009, also ends its access tokens), or the
    /// access token when there is no refresh token. Failures are ignored: the tokens are
    /// already gone from this device.
    public func revoke(_ tokens: TokenSet, transport: any HTTPTransport) async {
        guard let revocationEndpoint else { return }
        await TokenEndpoint(url: revocationEndpoint, client: client).revoke(tokens, transport: transport)
    }
}

/// Logs in again with a user name and password stored in the vault, as the OAuth 2.0
/// resource-owner password grant (RFC 6749 section 4.3); seed 004's "on 401, log in with
/// the stored credentials and retry", made safe.
///
/// Used alone, every refresh is a login with the stored password; as the `fallback` of
/// ``OAuth2RefreshStrategy`` it runs only after a refresh was refused.
///
/// For example:
///
/// ```swift
/// let credentials = CredentialStore(vault: vault, issuer: issuer, account: "alice")
/// try credentials.save(password: "hunter2")
/// let strategy = StoredCredentialsStrategy(tokenEndpoint: tokenURL, client: .none(clientID: "app"), credentials: credentials)
/// ```
public struct StoredCredentialsStrategy: AuthStrategy {
    public let tokenEndpoint: URL
    public let client: ClientAuthentication
    public let credentials: CredentialStore
    /// The statuses that mean "this access token was rejected"; see ``OAuth2RefreshStrategy/rejectedTokenStatuses``.
    public var rejectedTokenStatuses: Set<Int>

    public init(tokenEndpoint: URL, client: ClientAuthentication, credentials: CredentialStore,
                rejectedTokenStatuses: Set<Int> = AuthFailure.defaultRejectedTokenStatuses) {
        self.tokenEndpoint = tokenEndpoint
        self.client = client
        self.credentials = credentials
        self.rejectedTokenStatuses = rejectedTokenStatuses
    }

    public func authFailure(in response: HTTPResponse, for request: HTTPRequest) -> AuthFailure {
        AuthFailure.classify(response, rejectedTokenStatuses: rejectedTokenStatuses)
    }

    public func refresh(_ tokens: TokenSet, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        var fresh = try await relogin(transport: transport)
        if fresh.sessionID == nil { fresh.sessionID = tokens.sessionID }
        return fresh
    }

    public var canRelogin: Bool { true }

    public func relogin(transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        let stored: String?
        do {
            stored = try credentials.password()
        } catch {
            throw .transient(.credentialStorageFailed)
        }
        guard let password = stored else { throw .refused(.noStoredCredentials) }
        return try await TokenEndpoint(url: tokenEndpoint, client: client)
            .grant([("grant_type", "password"), ("username", credentials.account), ("password", password)], previous: nil, transport: transport)
    }
}
