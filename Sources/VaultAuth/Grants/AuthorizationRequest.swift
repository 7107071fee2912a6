import Foundation
import VaultKit

/// One authorization-code request with PKCE (RFC 6749 section 4.1, RFC 7636, `S256`), up to
/// the point a browser must be opened: it builds the URL, checks what comes back to the
/// redirect URI, and hands the code to ``OAuth2Grants/exchange(code:for:)``.
///
/// For example:
///
/// ```swift
/// let request = AuthorizationRequest(authorizationEndpoint: URL(string: "https://auth.example.com/authorize")!,
///                                    clientID: "desktop-app", redirectURI: URL(string: "http://127.0.0.1:8765/callback")!,
///                                    scope: "read")
/// openInBrowser(request.url)
/// let redirect = try await callbackServer.nextRequestURL()      // your loopback listener
/// let code = try request.code(from: redirect)                   // checks `state`
/// let tokens = try await OAuth2Grants(tokenEndpoint: tokenURL, client: .none(clientID: "desktop-app"))
///     .exchange(code: code, for: request)
/// try await client.signIn(with: tokens)
/// ```
///
/// `state` and the code verifier are 32 random bytes each (base64url, 43 characters). Keep
/// the request value until the redirect arrives; `description` shows neither.
public struct AuthorizationRequest: Sendable, CustomStringConvertible {
    public let authorizationEndpoint: URL
    public let clientID: String
    public let redirectURI: URL
    public let scope: String?
    /// The value the server must send back unchanged; protects the redirect against forgery (CSRF).
    public let state: String
    /// The PKCE secret sent only with the code exchange; its SHA-256 went out in the URL.
    public let codeVerifier: String

    /// A new request with a fresh `state` and code verifier.
    public init(authorizationEndpoint: URL, clientID: String, redirectURI: URL, scope: String? = nil) {
        self.init(authorizationEndpoint: authorizationEndpoint, clientID: clientID, redirectURI: redirectURI, scope: scope,
                  state: Self.randomToken(), codeVerifier: Self.randomToken())
    }

    /// A request restored from its parts, for an app that must survive a restart while the
    /// browser is open (keep `state` and `codeVerifier` in the vault meanwhile).
    public init(authorizationEndpoint: URL, clientID: String, redirectURI: URL, scope: String? = nil, state: String, codeVerifier: String) {
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.codeVerifier = codeVerifier
    }

    /// `BASE64URL(SHA256(code_verifier))`, the `S256` challenge of RFC 7636 section 4.2.
    public var codeChallenge: String {
        Self.base64URL(SHA256.hash(Array(codeVerifier.utf8)))
    }

    /// The URL to open in the browser.
    public var url: URL {
        var components = URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: false)!
        var items = components.queryItems ?? []
        items += [URLQueryItem(name: "response_type", value: "code"),
                  URLQueryItem(name: "client_id", value: clientID),
                  URLQueryItem(name: "redirect_uri", value: redirectURI.absoluteString),
                  URLQueryItem(name: "state", value: state),
                  URLQueryItem(name: "code_challenge", value: codeChallenge),
                  URLQueryItem(name: "code_challenge_method", value: "S256")]
        if let scope { items.append(URLQueryItem(name: "scope", value: scope)) }
        components.queryItems = items
        // URLComponents leaves "+" alone in queries; servers read it as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url!
    }

    /// The authorization code in the URL the browser was redirected to, once `state` matched.
    ///
    /// - Throws: ``AuthorizationError/wrongRedirect`` if the URL is not this request's redirect
    ///   URI, ``AuthorizationError/stateMismatch`` if `state` is missing or different (a forged
    ///   or stale redirect: do not exchange anything), ``AuthorizationError/denied(_:)`` with the
    ///   server's error code (for example `access_denied`), ``AuthorizationError/missingCode``.
    public func code(from redirect: URL) throws(AuthorizationError) -> String {
        guard let components = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
              components.scheme == redirectURI.scheme, components.host == redirectURI.host,
              components.port == redirectURI.port, components.path == redirectURI.path else { throw .wrongRedirect }
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        guard let returned = value("state"), Self.constantTimeEqual(returned, state) else { throw .stateMismatch }
        if let error = value("error") { throw .denied(OAuthErrorCode(rawValue: error)) }
        guard let code = value("code"), !code.isEmpty else { throw .missingCode }
        return code
    }

    public var description: String {
        "AuthorizationRequest(client: \(clientID), redirect: \(redirectURI.absoluteString), state: redacted, verifier: redacted)"
    }

    private static func randomToken() -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return base64URL(bytes)
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
