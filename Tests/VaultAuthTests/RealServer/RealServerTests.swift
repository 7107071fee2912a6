import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// One test's world against django-oauth-toolkit: its own server and database, a vault in a
/// fresh directory, and the test client program for real app processes.
struct RealServerWorld {
    let server: DjangoOAuthServer
    let directory: String
    let vaultPath: String
    let key: VaultKey
    let vault: Vault

    static func make(_ options: DjangoOAuthServer.Options = .init(), _ label: String = #function) async throws -> RealServerWorld {
        let directory = TestPaths.temporaryDirectory(label)
        let server = try await DjangoOAuthServer.start(options, in: directory)
        let key = VaultKey.random()
        let path = "\(directory)/app.vault"
        return await RealServerWorld(server: server, directory: directory, vaultPath: path, key: key, vault: try Vault.create(at: path, key: key))
    }

    var issuer: String { server.baseURL.absoluteString }
    var store: TokenStore { TokenStore(vault: vault, issuer: issuer, account: "alice") }

    func client(_ strategy: OAuth2RefreshStrategy? = nil) throws -> AuthClient {
        var configuration = AuthClient.Configuration()
        configuration.logger.logLevel = .critical
        return try AuthClient(store: store, strategy: strategy ?? server.strategy(), configuration: configuration)
    }

    /// Tokens the server issued but the app believes expired: the next use refreshes first.
    func storeExpiredCopy(of tokens: TokenSet) throws {
        var expired = tokens
        expired.issuedAt = Date().addingTimeInterval(-600)
        expired.expiresAt = Date().addingTimeInterval(-300)
        try store.save(expired)
    }

    /// An app process on this vault (vault-auth-test-client with the toolkit's endpoints); its
    /// stdin stays open for "GO".
    func app(_ mode: String) throws -> ChildProcess {
        let environment = ChildProcess.cleanEnvironment([
            "VAULT_AUTH_TEST_KEY": key.hexEncodedString(),
            "VAULT_AUTH_TEST_NO_RELOGIN": "1",
            "VAULT_AUTH_TEST_TOKEN_PATH": "o/token/",
            "VAULT_AUTH_TEST_REVOKE_PATH": "o/revoke_token/",
            "VAULT_AUTH_TEST_RESOURCE_PATH": "api/me",
            "VAULT_AUTH_TEST_CLIENT_ID": DjangoOAuthServer.Client.publicID,
        ])
        return try ChildProcess(TestPaths.executable("vault-auth-test-client"), [mode, vaultPath, issuer],
                                environment: environment, standardInput: nil)
    }
}

/// Processes sharing one vault against a server with rotation and reuse protection.
@Suite(.serialized) struct RealServerProcessTests {
    /// With reuse protection on: without a grace period (a replayed refresh token ends the whole
    /// grant at once) and with one (a replay inside it is answered, later ones end the grant).
    @Test(arguments: [(2, 0), (4, 0), (3, 30)])
    func processesSharingAVaultAfterExpiryMakeOneTokenRequest(_ count: Int, _ graceSeconds: Int) async throws {
        let world = try await RealServerWorld.make(DjangoOAuthServer.Options(reuseProtection: true, graceSeconds: graceSeconds))
        defer { world.server.stop() }
        let first = try await world.server.login()
        try world.storeExpiredCopy(of: first)

        let apps = try (0..<count).map { _ in try world.app("send-on-go") }
        defer { apps.forEach { $0.send(SIGKILL) } }
        for app in apps {
            #expect(try await offPool { app.waitForOutput(containing: "READY", timeout: .seconds(120)) })
        }
        // All at once: each one's tokens are past their expiry, so each wants to refresh.
        for app in apps { try app.write(Data("GO\n".utf8)) }
        for app in apps {
            let result = try await offPool { app.wait(timeout: .seconds(120)) }
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("STATUS 200"))
        }

        let counters = try await world.server.counters()
        #expect(counters["token:refresh_token"] == 1, "\(counters)")
        #expect(counters["token-status:400", default: 0] == 0, "a refresh was refused: \(counters)")
        // The winner's tokens are in the vault and live: nobody was signed out, no family revoked.
        let stored = try await #require(try world.store.load())
        #expect(stored.refreshToken != first.refreshToken)
        #expect(try await world.server.resourceStatus(with: stored.accessToken) == 200)
        #expect(await world.server.refreshOutcome(try #require(stored.refreshToken)) == "accepted")
    }

    @Test func signOutFromAProcessThatDidNotRotateRevokesTheNewestTokens() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let first = try await world.server.login()
        try await world.store.save(first)

        // B loads the first tokens, then waits.
        let signingOut = try world.app("sign-out-on-go")
        defer { signingOut.send(SIGKILL) }
        #expect(try await offPool { signingOut.waitForOutput(containing: "READY", timeout: .seconds(120)) })
        // A rotates them.
        let rotating = try world.app("check")
        let rotated = try await offPool { rotating.wait(timeout: .seconds(120)) }
        #expect(rotated.stdout.hasPrefix("SIGNED_IN 200"), "\(rotated.stdout) \(rotated.stderr)")
        let newest = try await #require(try world.store.load())
        #expect(newest.refreshToken != first.refreshToken)

        // B signs out: it must revoke what the vault holds now, not the tokens it loaded.
        try signingOut.write(Data("GO\n".utf8))
        let result = try await offPool { signingOut.wait(timeout: .seconds(120)) }
        #expect(result.stdout.contains("SIGNED_OUT_DONE"), "\(result.stdout) \(result.stderr)")
        await #expect(try world.store.load() == nil)
        #expect(try await world.server.resourceStatus(with: newest.accessToken) == 401)
        #expect(await world.server.refreshOutcome(try #require(newest.refreshToken)) == "\(StrategyError.refused(oauthError: .invalidGrant))")
    }
}

/// One process against the real server: rotation, reuse protection, error taxonomy, 403.
@Suite(.serialized) struct RealServerRefreshTests {
    @Test func rotationReuseProtectionAndOneClearRefusal() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let client = try world.client()
        let events = await client.events()
        let first = try await world.server.login()
        try await client.signIn(with: first)

        try await client.refreshNow()
        let rotated = try #require(await client.currentTokens)
        #expect(rotated.refreshToken != first.refreshToken)
        await #expect(try world.store.load() == rotated)
        #expect(try await client.send(HTTPRequest(url: world.server.resourceURL)).status == 200)

        // Someone replays the rotated-away refresh token: the server ends the whole family.
        #expect(await world.server.refreshOutcome(try #require(first.refreshToken)) == "\(StrategyError.refused(oauthError: .invalidGrant))")
        let before = try await world.server.refreshRequests()
        // The client learns it from a 401, refreshes once, is refused once, signs out; no loop.
        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) {
            try await client.send(HTTPRequest(url: world.server.resourceURL))
        }
        #expect(try await world.server.refreshRequests() == before + 1)
        await #expect(try world.store.load() == nil)
        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) {
            try await client.send(HTTPRequest(url: world.server.resourceURL))
        }
        #expect(try await world.server.refreshRequests() == before + 1)

        var seen: [AuthEvent] = []
        for await event in events {
            seen.append(event)
            if event.code == .signedOut { break }
        }
        #expect(seen == [.signedIn, .refreshed, .refreshRefused(oauthError: .invalidGrant), .signedOut(.refreshRefused(oauthError: .invalidGrant))])
    }

    @Test func aWrongClientSecretIsAConfigurationErrorThatKeepsTheTokens() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let confidential = DjangoOAuthServer.Client.confidentialID
        let right = ClientAuthentication.basic(clientID: confidential, secret: DjangoOAuthServer.Client.confidentialSecret)
        let first = try await world.server.grants(right).password(username: "alice", password: "wonderland")

        let misconfigured = try world.client(world.server.strategy(.basic(clientID: confidential, secret: "not the secret")))
        try await misconfigured.signIn(with: first)
        await #expect(throws: AuthError.configuration(oauthError: .invalidClient)) { try await misconfigured.refreshNow() }
        #expect(await misconfigured.currentState == .signedIn)
        await #expect(try world.store.load() == first)

        // The refresh token was fine all along: the right secret (sent in the body this time) uses it.
        let fixed = try world.client(world.server.strategy(.post(clientID: confidential, secret: DjangoOAuthServer.Client.confidentialSecret)))
        try await fixed.refreshNow()
        await #expect(try world.store.load()?.refreshToken != first.refreshToken)
        #expect(try await fixed.send(HTTPRequest(url: world.server.resourceURL)).status == 200)
    }

    @Test func a403FromTheStockProtectedViewIsARejectedTokenOnlyWhenOptedIn() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let forbidding = HTTPRequest(url: world.server.forbiddingResourceURL)
        let client = try world.client(world.server.strategy(rejected: [401, 403]))
        try await client.signIn(with: try await world.server.login())
        #expect(try await client.send(forbidding).status == 200)

        // The server no longer accepts the access token (an administrator deleted it; revoking
        // it through RFC 7009 would end its refresh token too), while the refresh token lives.
        var stale = try #require(await client.currentTokens)
        stale.accessToken = "deleted-by-an-administrator"
        try await client.signIn(with: stale)
        #expect(try await world.server.resourceStatus(with: stale.accessToken, url: world.server.forbiddingResourceURL) == 403)

        // By default a 403 is an answer like any other: no refresh.
        let plain = try world.client()
        #expect(try await plain.send(forbidding).status == 403)
        #expect(try await world.server.refreshRequests() == 0)
        // Opted in, it is a rejected token: one refresh, one retry.
        #expect(try await client.send(forbidding).status == 200)
        #expect(try await world.server.refreshRequests() == 1)
    }
}

/// The first tokens, from the library, against the real server.
@Suite(.serialized) struct RealServerGrantTests {
    @Test func clientCredentialsWithBasicAndPostAuthentication() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let id = DjangoOAuthServer.Client.serviceID, secret = DjangoOAuthServer.Client.serviceSecret
        for client in [ClientAuthentication.basic(clientID: id, secret: secret), .post(clientID: id, secret: secret)] {
            let tokens = try await world.server.grants(client).clientCredentials(scope: "read")
            #expect(tokens.scope == "read")
            #expect(tokens.refreshToken == nil)
            #expect(try await world.server.resourceStatus(with: tokens.accessToken) == 200)
        }
        await #expect(throws: StrategyError.configuration(oauthError: .invalidClient)) {
            try await world.server.grants(.basic(clientID: id, secret: "wrong")).clientCredentials()
        }
        // Ready for signIn: a client sends with them.
        let client = try world.client()
        try await client.signIn(with: try await world.server.grants(.post(clientID: id, secret: secret)).clientCredentials())
        #expect(try await client.send(HTTPRequest(url: world.server.resourceURL)).status == 200)
    }

    @Test func passwordGrantForPublicAndConfidentialClients() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let publicTokens = try await world.server.grants(.none(clientID: DjangoOAuthServer.Client.publicID))
            .password(username: "bob", password: "builder", scope: "read")
        #expect(publicTokens.refreshToken != nil)
        #expect(publicTokens.scope == "read")
        let confidential = try await world.server.grants(.post(clientID: DjangoOAuthServer.Client.confidentialID,
                                                              secret: DjangoOAuthServer.Client.confidentialSecret))
            .password(username: "alice", password: "wonderland")
        #expect(try await world.server.resourceStatus(with: confidential.accessToken) == 200)
        await #expect(throws: StrategyError.refused(oauthError: .invalidGrant)) {
            try await world.server.grants(.none(clientID: DjangoOAuthServer.Client.publicID)).password(username: "alice", password: "wrong")
        }
    }

    @Test func authorizationCodeWithPKCEThroughTheServersAuthorizeEndpoint() async throws {
        let world = try await RealServerWorld.make()
        defer { world.server.stop() }
        let request = AuthorizationRequest(authorizationEndpoint: world.server.authorizeURL, clientID: DjangoOAuthServer.Client.webID,
                                           redirectURI: world.server.callbackURL, scope: "read write")
        var browser = TestBrowser()
        let redirect = try await browser.authorize(request.url, loginURL: world.server.loginURL, user: "alice", password: "wonderland")
        let code = try request.code(from: redirect)

        // A redirect for another request (its state) is refused before anything is exchanged.
        let other = AuthorizationRequest(authorizationEndpoint: world.server.authorizeURL, clientID: DjangoOAuthServer.Client.webID,
                                         redirectURI: world.server.callbackURL)
        #expect(throws: AuthorizationError.stateMismatch) { try other.code(from: redirect) }
        // The code is bound to this request's verifier: another verifier cannot redeem it...
        let grants = world.server.grants(.none(clientID: DjangoOAuthServer.Client.webID))
        await #expect(throws: StrategyError.refused(oauthError: .invalidGrant)) { try await grants.exchange(code: code, for: other) }

        // ...a fresh code with the right one can.
        var again = TestBrowser()
        let second = try request.code(from: try await again.authorize(request.url, loginURL: world.server.loginURL,
                                                                      user: "alice", password: "wonderland"))
        let tokens = try await grants.exchange(code: second, for: request)
        #expect(tokens.refreshToken != nil)
        let client = try world.client(world.server.strategy(.none(clientID: DjangoOAuthServer.Client.webID)))
        try await client.signIn(with: tokens)
        try await client.refreshNow()
        #expect(try await client.send(HTTPRequest(url: world.server.resourceURL)).status == 200)
    }
}
