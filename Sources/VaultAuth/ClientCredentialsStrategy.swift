import Foundation

/// A service signed in as itself with the client-credentials grant (RFC 6749 section 4.4):
/// every renewal is that grant again, with the same client authentication and scope.
///
/// For example:
///
/// ```swift
/// let strategy = ClientCredentialsStrategy(tokenEndpoint: URL(string: "https://auth.example.com/o/token/")!,
///                                          client: .basic(clientID: "reporting", secret: secret), scope: "read")
/// let client = try AuthClient(store: TokenStore(vault: vault, issuer: "https://auth.example.com", account: "reporting"),
///                             strategy: strategy)
/// try await client.signIn()     // the first token: the same grant
/// ```
///
/// Servers issue no refresh token for this grant, and need none: the client asks for a new
/// access token when the old one nears expiry or is rejected, as it would refresh one, so the
/// renewal is one token request for every process sharing the vault. `invalid_client` (a
/// wrong or revoked secret) is a configuration error that keeps the tokens; the client never
/// signs out for lack of a refresh token.
public struct ClientCredentialsStrategy: AuthStrategy {
    /// The token endpoint.
    public let tokenEndpoint: URL
    /// How the client authenticates: `client_secret_basic` or `client_secret_post`.
    public let client: ClientAuthentication
    /// The scope asked for at each renewal; `nil` for the client's default.
    public let scope: String?
    /// The RFC 7009 revocation endpoint, if the server has one: the access token is revoked at sign-out.
    public let revocationEndpoint: URL?
    /// The statuses that mean "this access token was rejected"; see ``OAuth2RefreshStrategy/rejectedTokenStatuses``.
    public var rejectedTokenStatuses: Set<Int>

    public init(tokenEndpoint: URL, client: ClientAuthentication, scope: String? = nil, revocationEndpoint: URL? = nil,
                rejectedTokenStatuses: Set<Int> = AuthFailure.defaultRejectedTokenStatuses) {
        self.tokenEndpoint = tokenEndpoint
        self.client = client
        self.scope = scope
        self.revocationEndpoint = revocationEndpoint
        self.rejectedTokenStatuses = rejectedTokenStatuses
    }

    public func authFailure(in response: HTTPResponse, for request: HTTPRequest) -> AuthFailure {
        AuthFailure.classify(response, rejectedTokenStatuses: rejectedTokenStatuses)
    }

    /// A new access token by the grant; the old one is not presented (it is not a credential here).
    public func refresh(_ tokens: TokenSet, transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        var fresh = try await relogin(transport: transport)
        if fresh.sessionID == nil { fresh.sessionID = tokens.sessionID }
        return fresh
    }

    public var canRelogin: Bool { true }

    /// The grant itself; also the first sign-in (``AuthClient/signIn()``).
    public func relogin(transport: any HTTPTransport) async throws(StrategyError) -> TokenSet {
        let parameters = [("grant_type", "client_credentials")] + (scope.map { [("scope", $0)] } ?? [])
        return try await TokenEndpoint(url: tokenEndpoint, client: client).grant(parameters, previous: nil, transport: transport)
    }

    public func revoke(_ tokens: TokenSet, transport: any HTTPTransport) async {
        guard let revocationEndpoint else { return }
        await TokenEndpoint(url: revocationEndpoint, client: client).revoke(tokens, transport: transport)
    }
}
