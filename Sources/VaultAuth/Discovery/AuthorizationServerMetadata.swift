import Foundation

/// What an authorization server says about itself (RFC 8414 authorization server metadata,
/// or an OpenID Connect discovery document): its endpoints and what it supports. Get one with
/// ``AuthorizationServerDiscovery``, then build the grants and strategies from it: each
/// factory checks that the server lists what that client will use, and throws a
/// ``DiscoveryError`` naming the mismatch instead of failing at the first token request.
///
/// ```swift
/// let discovery = AuthorizationServerDiscovery()
/// let metadata = try await discovery.metadata(for: URL(string: "https://auth.example.com")!)
/// let strategy = try metadata.clientCredentialsStrategy(client: .basic(clientID: "reporting", secret: secret))
/// ```
public struct AuthorizationServerMetadata: Sendable, Hashable {
    /// The issuer identifier, as the document states it (equal to the one asked for).
    public var issuer: String
    public var tokenEndpoint: URL
    public var authorizationEndpoint: URL?
    /// RFC 7009 revocation; OpenID Connect documents often leave it out.
    public var revocationEndpoint: URL?
    /// `token_endpoint_auth_methods_supported`; RFC 8414's default `["client_secret_basic"]` when absent.
    public var tokenEndpointAuthMethods: [String]
    /// `code_challenge_methods_supported`; empty when absent (RFC 8414: no PKCE).
    public var codeChallengeMethods: [String]
    /// `grant_types_supported`, or `nil` when absent: many servers leave it out although they
    /// take more than the specifications' default, so an absent list is not held against a grant.
    public var grantTypes: [String]?

    public init(issuer: String, tokenEndpoint: URL, authorizationEndpoint: URL? = nil, revocationEndpoint: URL? = nil,
                tokenEndpointAuthMethods: [String] = ["client_secret_basic"], codeChallengeMethods: [String] = [],
                grantTypes: [String]? = nil) {
        self.issuer = issuer
        self.tokenEndpoint = tokenEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.tokenEndpointAuthMethods = tokenEndpointAuthMethods
        self.codeChallengeMethods = codeChallengeMethods
        self.grantTypes = grantTypes
    }

    /// Reads a metadata document; `nil` when it is not one (no issuer or token endpoint).
    init?(json body: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let issuer = object["issuer"] as? String,
              let token = Self.url(object["token_endpoint"]) else { return nil }
        func strings(_ key: String) -> [String]? { object[key] as? [String] }
        self.init(issuer: issuer, tokenEndpoint: token,
                  authorizationEndpoint: Self.url(object["authorization_endpoint"]),
                  revocationEndpoint: Self.url(object["revocation_endpoint"]),
                  tokenEndpointAuthMethods: strings("token_endpoint_auth_methods_supported") ?? ["client_secret_basic"],
                  codeChallengeMethods: strings("code_challenge_methods_supported") ?? [],
                  grantTypes: strings("grant_types_supported"))
    }

    private static func url(_ value: Any?) -> URL? {
        guard let text = value as? String, let url = URL(string: text), url.scheme == "https" || url.scheme == "http",
              url.host != nil else { return nil }
        return url
    }

    /// The RFC 8414 name of the client's authentication method.
    static func methodName(_ client: ClientAuthentication) -> String {
        switch client {
        case .none: "none"
        case .basic: "client_secret_basic"
        case .post: "client_secret_post"
        }
    }

    /// Throws unless the server lists the client's authentication method.
    public func check(_ client: ClientAuthentication) throws(DiscoveryError) {
        let method = Self.methodName(client)
        guard tokenEndpointAuthMethods.contains(method) else { throw .unsupportedClientAuthentication(method) }
    }

    /// Throws if the server lists its grant types and `grantType` is not among them.
    public func check(grantType: String) throws(DiscoveryError) {
        if let grantTypes, !grantTypes.contains(grantType) { throw .unsupportedGrantType(grantType) }
    }

    /// The first-token grants at this server's token endpoint, for `client`.
    public func grants(client: ClientAuthentication, transport: any HTTPTransport = URLSessionTransport()) throws(DiscoveryError) -> OAuth2Grants {
        try check(client)
        return OAuth2Grants(tokenEndpoint: tokenEndpoint, client: client, transport: transport)
    }

    /// Renewal by the client-credentials grant, revoking at sign-out if the server has a revocation endpoint.
    public func clientCredentialsStrategy(client: ClientAuthentication, scope: String? = nil,
                                          rejectedTokenStatuses: Set<Int> = AuthFailure.defaultRejectedTokenStatuses)
        throws(DiscoveryError) -> ClientCredentialsStrategy {
        try check(client)
        try check(grantType: "client_credentials")
        return ClientCredentialsStrategy(tokenEndpoint: tokenEndpoint, client: client, scope: scope,
                                         revocationEndpoint: revocationEndpoint, rejectedTokenStatuses: rejectedTokenStatuses)
    }

    /// The refresh-token grant, revoking at sign-out if the server has a revocation endpoint.
    public func refreshStrategy(client: ClientAuthentication, fallback: StoredCredentialsStrategy? = nil,
                                rejectedTokenStatuses: Set<Int> = AuthFailure.defaultRejectedTokenStatuses)
        throws(DiscoveryError) -> OAuth2RefreshStrategy {
        try check(client)
        try check(grantType: "refresh_token")
        return OAuth2RefreshStrategy(tokenEndpoint: tokenEndpoint, client: client, revocationEndpoint: revocationEndpoint,
                                     fallback: fallback, rejectedTokenStatuses: rejectedTokenStatuses)
    }

    /// The browser flow (authorization code with PKCE `S256`) at this server's authorization endpoint.
    public func authorizationRequest(clientID: String, redirectURI: URL, scope: String? = nil) throws(DiscoveryError) -> AuthorizationRequest {
        guard let authorizationEndpoint else { throw .missingEndpoint("authorization_endpoint") }
        guard codeChallengeMethods.contains("S256") else { throw .unsupportedCodeChallengeMethod("S256") }
        try check(grantType: "authorization_code")
        return AuthorizationRequest(authorizationEndpoint: authorizationEndpoint, clientID: clientID, redirectURI: redirectURI, scope: scope)
    }
}
