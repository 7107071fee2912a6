import Foundation
import TestSupport
import VaultAuth
#if canImport(Glibc)
import Glibc
#endif

/// django-oauth-toolkit, a widely used OAuth 2.0 authorization server nobody here wrote, run
/// from the small Django project in Tests/OAuthServer as a child process: a throwaway SQLite
/// database in the test's directory, 127.0.0.1 and a port the server picks itself.
///
/// ``start(_:in:)`` returns once the server answers; ``stop()`` kills it. Tests call `stop()`
/// in a `defer`, and the server also exits by itself when this process dies, so a failing or
/// crashing test never leaves one behind.
final class DjangoOAuthServer: Sendable {
    struct Options: Sendable {
        /// `REFRESH_TOKEN_REUSE_PROTECTION`: a rotated refresh token presented again revokes its family.
        var reuseProtection = true
        /// `REFRESH_TOKEN_GRACE_PERIOD_SECONDS`.
        var graceSeconds = 0
        /// `ACCESS_TOKEN_EXPIRE_SECONDS`.
        var accessTokenSeconds = 300
        /// OpenID Connect on, with its discovery document under the issuer (off by default: with
        /// it on, the toolkit answers the refresh-token grants of password logins with 500).
        var openID = false
        /// Also serve the RFC 8414 document at the root (`/.well-known/oauth-authorization-server/o`).
        var rootMetadata = false
    }

    /// The clients the server seeds (Tests/OAuthServer/.../vaultauth_test_server.py).
    enum Client {
        /// Public, password grant (and refresh).
        static let publicID = "vaultauth-public"
        /// Confidential, password grant; secret `confidential-secret`.
        static let confidentialID = "vaultauth-confidential"
        static let confidentialSecret = "confidential-secret"
        /// Confidential, client-credentials grant; secret `service-secret`.
        static let serviceID = "vaultauth-service"
        static let serviceSecret = "service-secret"
        /// Public, authorization code with PKCE, redirect `<base>/callback`, no consent screen.
        static let webID = "vaultauth-web"
    }

    static let users = ["alice": "wonderland", "bob": "builder"]

    let baseURL: URL
    private let process: ChildProcess

    private init(baseURL: URL, process: ChildProcess) {
        self.baseURL = baseURL
        self.process = process
    }

    /// The issuer identifier the toolkit states in its metadata: the URL it is mounted at.
    var issuerURL: URL { baseURL.appendingPathComponent("o") }
    var tokenURL: URL { baseURL.appendingPathComponent("o/token/") }
    var revokeURL: URL { baseURL.appendingPathComponent("o/revoke_token/") }
    var authorizeURL: URL { baseURL.appendingPathComponent("o/authorize/") }
    var callbackURL: URL { baseURL.appendingPathComponent("callback") }
    var loginURL: URL { baseURL.appendingPathComponent("accounts/login/") }
    /// The toolkit's RFC 9728 protected view: 401 with `WWW-Authenticate` for a bad token.
    var resourceURL: URL { baseURL.appendingPathComponent("api/me") }
    /// The toolkit's stock `ProtectedResourceView`: a bare 403 for a bad token.
    var forbiddingResourceURL: URL { baseURL.appendingPathComponent("api/me-403") }

    /// The Django project, found from this file: Tests/OAuthServer/manage.py.
    static let managePy: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("OAuthServer/manage.py").path
    }()

    /// Migrates a new database in `directory`, seeds the clients and users, and serves.
    static func start(_ options: Options = Options(), in directory: String) async throws -> DjangoOAuthServer {
        let environment = ChildProcess.cleanEnvironment([
            "VAULTAUTH_OAUTH_DB": "\(directory)/oauth-server.sqlite3",
            "VAULTAUTH_OAUTH_REUSE_PROTECTION": options.reuseProtection ? "1" : "0",
            "VAULTAUTH_OAUTH_GRACE_SECONDS": "\(options.graceSeconds)",
            "VAULTAUTH_OAUTH_ACCESS_SECONDS": "\(options.accessTokenSeconds)",
            "VAULTAUTH_OAUTH_ROOT_METADATA": options.rootMetadata ? "1" : "0",
            "VAULTAUTH_OAUTH_OIDC": options.openID ? "1" : "0",
            "PYTHONDONTWRITEBYTECODE": "1",
        ])
        let process = try ChildProcess("/usr/bin/env", ["python3", managePy, "vaultauth_test_server"], environment: environment)
        let listening = try await offPool { process.waitForOutput(containing: "\n", timeout: .seconds(180)) }
        let line = String(decoding: process.outputSoFar, as: UTF8.self)
        guard listening, line.hasPrefix("LISTENING "), let port = Int(line.dropFirst("LISTENING ".count).prefix { $0.isNumber }) else {
            process.send(SIGKILL)
            let result = try await offPool { process.wait(timeout: .seconds(30)) }
            throw ServerDidNotStart(output: result.stdout + result.stderr)
        }
        return DjangoOAuthServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, process: process)
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        var output: String
        var description: String { "the django-oauth-toolkit server did not start (is scripts/install-deps.sh --test run?):\n\(output)" }
    }

    func stop() {
        process.send(SIGKILL)
        _ = process.wait(timeout: .seconds(30))
    }

    /// How often the server was asked for what: `token:<grant_type>`, `token-status:<status>`, `revoke`.
    func counters() async throws -> [String: Int] {
        let response = try await URLSessionTransport().send(HTTPRequest(url: baseURL.appendingPathComponent("test/counters")))
        return try JSONDecoder().decode([String: Int].self, from: response.body)
    }

    func refreshRequests() async throws -> Int { try await counters()["token:refresh_token", default: 0] }

    /// Grants against this server for `client`.
    func grants(_ client: ClientAuthentication) -> OAuth2Grants {
        OAuth2Grants(tokenEndpoint: tokenURL, client: client)
    }

    /// The refresh strategy a public client of this server uses.
    func strategy(_ client: ClientAuthentication = .none(clientID: Client.publicID), rejected: Set<Int> = [401]) -> OAuth2RefreshStrategy {
        OAuth2RefreshStrategy(tokenEndpoint: tokenURL, client: client, revocationEndpoint: revokeURL, rejectedTokenStatuses: rejected)
    }

    /// A first login of `user` with the password grant, for the public client.
    func login(_ user: String = "alice") async throws -> TokenSet {
        try await grants(.none(clientID: Client.publicID)).password(username: user, password: Self.users[user]!)
    }

    /// The status the protected resource answers for an access token.
    func resourceStatus(with accessToken: String, url: URL? = nil) async throws -> Int {
        try await URLSessionTransport().send(HTTPRequest(url: url ?? resourceURL, headers: [("Authorization", "Bearer \(accessToken)")])).status
    }

    /// Whether a refresh token is still accepted: spends it if it is (rotation).
    func refreshOutcome(_ refreshToken: String) async -> String {
        do {
            _ = try await OAuth2RefreshStrategy(tokenEndpoint: tokenURL, client: .none(clientID: Client.publicID))
                .refresh(TokenSet(accessToken: "unused", refreshToken: refreshToken), transport: URLSessionTransport())
            return "accepted"
        } catch {
            return "\(error)"
        }
    }
}
