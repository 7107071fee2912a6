import Foundation

/// The first tokens of a session: the OAuth 2.0 grants that start one, each answering a
/// ``TokenSet`` ready for ``AuthClient/signIn(with:)``.
///
/// For example, a service signing in as itself (`client_secret_basic`):
///
/// ```swift
/// let grants = OAuth2Grants(tokenEndpoint: URL(string: "https://auth.example.com/oauth/token")!,
///                           client: .basic(clientID: "reporting", secret: secretFromTheVault))
/// try await client.signIn(with: try await grants.clientCredentials(scope: "read"))
/// ```
///
/// The browser flow for users is ``AuthorizationRequest`` (authorization code with PKCE). The
/// errors are the strategies' (RFC 6749 section 5.2): ``StrategyError/Code/refused`` for
/// `invalid_grant` (wrong password, used or expired code), ``StrategyError/Code/configuration``
/// for a refused client, ``StrategyError/Code/transient`` for network errors, 5xx and 429.
public struct OAuth2Grants: Sendable {
    /// The token endpoint.
    public let tokenEndpoint: URL
    /// How the client authenticates: `client_secret_basic`, `client_secret_post`, or public.
    public let client: ClientAuthentication
    /// The transport the grants are posted with.
    public let transport: any HTTPTransport

    public init(tokenEndpoint: URL, client: ClientAuthentication, transport: any HTTPTransport = URLSessionTransport()) {
        self.tokenEndpoint = tokenEndpoint
        self.client = client
        self.transport = transport
    }

    private var endpoint: TokenEndpoint { TokenEndpoint(url: tokenEndpoint, client: client) }

    /// The client-credentials grant (RFC 6749 section 4.4): a confidential client signs in as
    /// itself, with no user. Servers usually issue no refresh token for it: give the
    /// ``AuthClient`` a ``ClientCredentialsStrategy``, which renews the access token with this
    /// grant before it expires (or after a 401). Under ``OAuth2RefreshStrategy`` the token is
    /// used until it expires, and the client then signs out.
    public func clientCredentials(scope: String? = nil) async throws(StrategyError) -> TokenSet {
        try await endpoint.grant([("grant_type", "client_credentials")] + Self.scope(scope), previous: nil, transport: transport)
    }

    /// The resource-owner password grant (RFC 6749 section 4.3).
    ///
    /// Discouraged (the OAuth 2.0 Security BCP forbids it): the app sees the user's password.
    /// Use it only for first-party apps and tests; users should go through
    /// ``AuthorizationRequest`` in a browser.
    public func password(username: String, password: String, scope: String? = nil) async throws(StrategyError) -> TokenSet {
        try await endpoint.grant([("grant_type", "password"), ("username", username), ("password", password)] + Self.scope(scope),
                                 previous: nil, transport: transport)
    }

    /// Exchanges the code the browser brought back (see ``AuthorizationRequest/code(from:)``)
    /// for tokens (RFC 6749 section 4.1.3), with the PKCE verifier (RFC 7636 section 4.5).
    public func exchange(code: String, for request: AuthorizationRequest) async throws(StrategyError) -> TokenSet {
        try await endpoint.grant([("grant_type", "authorization_code"), ("code", code),
                                  ("redirect_uri", request.redirectURI.absoluteString),
                                  ("code_verifier", request.codeVerifier)],
                                 previous: nil, transport: transport)
    }

    private static func scope(_ scope: String?) -> [(String, String)] {
        scope.map { [("scope", $0)] } ?? []
    }
}
