import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// A service signed in with the client-credentials grant, against django-oauth-toolkit issuing
/// 5-second access tokens and no refresh token: renewed by the same grant, never signed out.
@Suite(.serialized) struct ClientCredentialsTests {
    static let service = ClientAuthentication.basic(clientID: DjangoOAuthServer.Client.serviceID,
                                                    secret: DjangoOAuthServer.Client.serviceSecret)

    func client(_ world: RealServerWorld, _ authentication: ClientAuthentication = service) throws -> AuthClient {
        var configuration = AuthClient.Configuration()
        configuration.logger.logLevel = .critical
        let strategy = ClientCredentialsStrategy(tokenEndpoint: world.server.tokenURL, client: authentication, scope: "read",
                                                 revocationEndpoint: world.server.revokeURL)
        return try AuthClient(store: world.store, strategy: strategy, configuration: configuration)
    }

    /// Thirty seconds of calls, one every 100 ms, with tokens that live five: every call 200,
    /// each token fetched once and used, no sign-out.
    @Test func renewsAFiveSecondTokenForThirtySecondsWithoutSigningOut() async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(accessTokenSeconds: 5))
        defer { world.server.stop() }
        let client = try client(world)
        let events = await client.events()
        try await client.signIn()
        let first = try #require(await client.currentTokens)
        #expect(first.refreshToken == nil, "the grant issues no refresh token: renewal must not need one")

        var used: [String] = []
        let end = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < end {
            let response = try await client.send(HTTPRequest(url: world.server.resourceURL))
            #expect(response.status == 200)
            let token = try #require(await client.currentTokens).accessToken
            if used.last != token { used.append(token) }
            try await Task.sleep(for: .milliseconds(100))
        }

        // A 5-second token cannot carry 30 seconds of 200s: it was renewed several times.
        #expect(used.count >= 6, "\(used.count) tokens")
        #expect(Set(used).count == used.count)
        let counters = try await world.server.counters()
        #expect(counters["token:client_credentials"] == used.count, "\(counters)")
        #expect(counters["token-status:200"] == used.count, "\(counters)")
        #expect(counters["resource-status:401", default: 0] == 0, "a token was used past its expiry: \(counters)")
        #expect(await client.currentState == .signedIn)
        await #expect(try client.store.load()?.accessToken == used.last)

        try await client.signOut()
        var seen: [AuthEvent.Code] = []
        for await event in events {
            seen.append(event.code)
            if event.code == .signedOut { break }
        }
        #expect(seen.filter { $0 == .signedOut }.count == 1, "signed out before the test did: \(seen)")
        #expect(seen.filter { $0 == .refreshed }.count == used.count - 1, "\(seen)")
        #expect(!seen.contains(.refreshRefused))
    }

    /// Two service processes on one vault: each renewal is one token request for both.
    @Test func twoProcessesShareEachRenewal() async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(accessTokenSeconds: 5))
        defer { world.server.stop() }
        try await client(world).signIn()

        let environment = ChildProcess.cleanEnvironment([
            "VAULT_AUTH_TEST_KEY": world.key.hexEncodedString(),
            "VAULT_AUTH_TEST_TOKEN_PATH": "o/token/",
            "VAULT_AUTH_TEST_REVOKE_PATH": "o/revoke_token/",
            "VAULT_AUTH_TEST_RESOURCE_PATH": "api/me",
            "VAULT_AUTH_TEST_CLIENT_ID": DjangoOAuthServer.Client.serviceID,
            "VAULT_AUTH_TEST_CLIENT_SECRET": DjangoOAuthServer.Client.serviceSecret,
        ])
        let apps = try (0..<2).map { _ in
            try ChildProcess(TestPaths.executable("vault-auth-test-client"), ["service-loop", world.vaultPath, world.issuer, "15"],
                             environment: environment)
        }
        defer { apps.forEach { $0.send(SIGKILL) } }
        var usedBy: [Set<String>] = []
        for app in apps {
            let result = try await offPool { app.wait(timeout: .seconds(120)) }
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("DONE"))
            usedBy.append(Set(result.stdout.split(separator: "\n").filter { $0.hasPrefix("USED ") }.map { String($0.dropFirst(5)) }))
        }

        let counters = try await world.server.counters()
        let requests = counters["token:client_credentials", default: 0]
        let everyToken = usedBy[0].union(usedBy[1])
        #expect(everyToken.count >= 4, "15 s of 5-second tokens: \(everyToken.count)")
        // Every token fetched was used (no request lost a race), and the tokens were shared: had
        // each process renewed on its own, each would have used about half of them.
        #expect(requests == everyToken.count, "\(counters)")
        #expect(requests <= max(usedBy[0].count, usedBy[1].count) + 1, "\(usedBy.map(\.count)) of \(requests)")
        #expect(counters["resource-status:401", default: 0] == 0, "\(counters)")
    }

    /// A token the server stopped accepting (revoked, RFC 7009) is renewed on the 401, and the
    /// call retried; with `client_secret_basic` and `client_secret_post` alike.
    @Test(arguments: [false, true])
    func aRejectedTokenIsRenewedByTheGrant(_ secretInTheBody: Bool) async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let client = try client(world, secretInTheBody
            ? .post(clientID: DjangoOAuthServer.Client.serviceID, secret: DjangoOAuthServer.Client.serviceSecret) : Self.service)
        try await client.signIn()
        let first = try #require(await client.currentTokens)
        await client.strategy.revoke(first, transport: URLSessionTransport())
        #expect(try await world.server.resourceStatus(with: first.accessToken) == 401)

        #expect(try await client.send(HTTPRequest(url: world.server.resourceURL)).status == 200)
        let renewed = try #require(await client.currentTokens)
        #expect(renewed.accessToken != first.accessToken)
        await #expect(try client.store.load() == renewed)
        let counters = try await world.server.counters()
        #expect(counters["token:client_credentials"] == 2, "\(counters)")
        #expect(counters["resource-status:401"] == 2, "the test's check and the client's first try: \(counters)")
    }

    /// A wrong secret at renewal is the client's configuration: the token is kept, nobody is signed out.
    @Test func aRefusedClientAtRenewalKeepsTheToken() async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(accessTokenSeconds: 5))
        defer { world.server.stop() }
        try await client(world).signIn()
        let wrong = try client(world, .basic(clientID: DjangoOAuthServer.Client.serviceID, secret: "wrong-secret"))
        let before = try #require(await wrong.currentTokens)
        await #expect(throws: AuthError.configuration(oauthError: .invalidClient)) { try await wrong.refreshNow() }
        #expect(await wrong.currentState == .signedIn)
        await #expect(try wrong.store.load() == before)
    }
}
