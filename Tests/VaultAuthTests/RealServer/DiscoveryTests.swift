import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// Endpoints from the issuer URL, against django-oauth-toolkit with OpenID Connect on.
@Suite(.serialized) struct DiscoveryTests {
    static let service = ClientCredentialsTests.service

    /// Only the OpenID Connect document (the toolkit mounted under /o/): found after RFC 8414's
    /// location answers 404, fetched once, and enough to sign a service in and call the API.
    @Test func openIDConnectDiscoveryConfiguresAWorkingClient() async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(openID: true))
        defer { world.server.stop() }
        let discovery = AuthorizationServerDiscovery()
        let metadata = try await discovery.metadata(for: world.server.issuerURL)
        #expect(metadata.issuer == world.server.issuerURL.absoluteString)
        #expect(metadata.tokenEndpoint == world.server.tokenURL)
        #expect(metadata.authorizationEndpoint == world.server.authorizeURL)
        #expect(metadata.revocationEndpoint == nil, "the OpenID Connect document has none")
        #expect(try await world.server.counters()["discovery"] == 2)

        // Cached: a second client of the same issuer asks nobody.
        #expect(try await discovery.metadata(for: world.server.issuerURL) == metadata)
        #expect(try await world.server.counters()["discovery"] == 2)

        var configuration = AuthClient.Configuration()
        configuration.logger.logLevel = .critical
        let client = try AuthClient(store: world.store, strategy: try metadata.clientCredentialsStrategy(client: Self.service, scope: "read"),
                                    configuration: configuration)
        try await client.signIn()
        #expect(try await client.send(HTTPRequest(url: world.server.resourceURL)).status == 200)

        // The browser flow's PKCE method is listed; a public client at the token endpoint is not.
        let request = try metadata.authorizationRequest(clientID: DjangoOAuthServer.Client.webID, redirectURI: world.server.callbackURL)
        #expect(request.url.absoluteString.hasPrefix(world.server.authorizeURL.absoluteString))
        #expect(throws: DiscoveryError.unsupportedClientAuthentication("none")) {
            try metadata.grants(client: .none(clientID: DjangoOAuthServer.Client.publicID))
        }
    }

    /// With the RFC 8414 document at the root, it is the one used: it has the revocation endpoint.
    @Test func rfc8414MetadataIsPreferred() async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(rootMetadata: true))
        defer { world.server.stop() }
        let metadata = try await AuthorizationServerDiscovery().metadata(for: world.server.issuerURL)
        #expect(metadata.revocationEndpoint == world.server.revokeURL)
        #expect(metadata.grantTypes?.contains("client_credentials") == true)
        #expect(try await world.server.counters()["discovery"] == 1)
        let strategy = try metadata.clientCredentialsStrategy(client: Self.service)
        #expect(strategy.revocationEndpoint == world.server.revokeURL)
    }

    /// A URL that is not the issuer: no document at either place.
    @Test func aURLThatIsNotTheIssuerIsNotFound() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let discovery = AuthorizationServerDiscovery()
        await #expect(throws: DiscoveryError.notFound) { try await discovery.metadata(for: world.server.baseURL) }
        // Failures are not cached: the next call asks again.
        await #expect(throws: DiscoveryError.notFound) { try await discovery.metadata(for: world.server.baseURL) }
        #expect(try await world.server.counters()["discovery"] == 4)
    }
}

/// The checks that need no server: a transport that answers with a fixed document.
@Suite struct DiscoveryCheckTests {
    final class FixedDocument: HTTPTransport {
        let body: Data
        let requests = Locked<[URL]>([])
        init(_ object: [String: Any]) throws { body = try JSONSerialization.data(withJSONObject: object) }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            requests.withLock { $0.append(request.url) }
            return HTTPResponse(status: 200, headers: [], body: body)
        }
    }

    static let issuer = URL(string: "https://auth.example.com/tenant")!
    static var document: [String: Any] { ["issuer": "https://auth.example.com/tenant",
                                          "token_endpoint": "https://auth.example.com/tenant/token"] }

    @Test func aDocumentNamingAnotherIssuerIsRefused() async throws {
        var forged = Self.document
        forged["issuer"] = "https://attacker.example"
        let transport = try FixedDocument(forged)
        await #expect(throws: DiscoveryError.issuerMismatch) {
            try await AuthorizationServerDiscovery(transport: transport).metadata(for: Self.issuer)
        }
        #expect(transport.requests.withLock { $0 } == [URL(string: "https://auth.example.com/.well-known/oauth-authorization-server/tenant")!])
    }

    @Test func plainHTTPIsRefusedExceptOnLoopback() async throws {
        let transport = try FixedDocument(Self.document)
        await #expect(throws: DiscoveryError.insecureIssuer) {
            try await AuthorizationServerDiscovery(transport: transport).metadata(for: URL(string: "http://auth.example.com/tenant")!)
        }
        #expect(transport.requests.withLock { $0 }.isEmpty)
    }

    @Test func defaultsFollowRFC8414AndMismatchesAreNamed() async throws {
        let transport = try FixedDocument(Self.document)
        let discovery = AuthorizationServerDiscovery(transport: transport, maxAge: .zero)
        let metadata = try await discovery.metadata(for: Self.issuer)
        // Absent lists: client_secret_basic only, no PKCE, any grant.
        _ = try metadata.clientCredentialsStrategy(client: .basic(clientID: "id", secret: "s"))
        #expect(throws: DiscoveryError.unsupportedClientAuthentication("client_secret_post")) {
            try metadata.clientCredentialsStrategy(client: .post(clientID: "id", secret: "s"))
        }
        #expect(throws: DiscoveryError.missingEndpoint("authorization_endpoint")) {
            try metadata.authorizationRequest(clientID: "app", redirectURI: URL(string: "http://127.0.0.1/cb")!)
        }
        var plainOnly = metadata
        plainOnly.authorizationEndpoint = URL(string: "https://auth.example.com/tenant/authorize")!
        plainOnly.codeChallengeMethods = ["plain"]
        #expect(throws: DiscoveryError.unsupportedCodeChallengeMethod("S256")) {
            try plainOnly.authorizationRequest(clientID: "app", redirectURI: URL(string: "http://127.0.0.1/cb")!)
        }
        var passwordOnly = metadata
        passwordOnly.grantTypes = ["password", "refresh_token"]
        #expect(throws: DiscoveryError.unsupportedGrantType("client_credentials")) {
            try passwordOnly.clientCredentialsStrategy(client: .basic(clientID: "id", secret: "s"))
        }
        // maxAge zero: every call fetches again.
        _ = try await discovery.metadata(for: Self.issuer)
        #expect(transport.requests.withLock { $0 }.count == 2)
    }
}
