import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// The cross-process rules that need a controlled server: clients in one process take the
/// same lock as processes do, a refusal deletes only what it refused.
@Suite struct CrossProcessTests {
    @Test func twoClientsOnOneVaultRefreshOnceWhenBothFindTheTokensExpired() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let signedIn = try #require(await fixture.signedInClient().currentTokens)
        // Both load tokens they believe expired (the server still takes them).
        var expired = signedIn
        expired.issuedAt = Date().addingTimeInterval(-600)
        expired.expiresAt = Date().addingTimeInterval(-300)
        try await fixture.store().save(expired)
        let first = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())
        let second = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())

        let firstEvents = await first.events(), secondEvents = await second.events()
        async let a = first.send(fixture.resource)
        async let b = second.send(fixture.resource)
        let statuses = try await [a.status, b.status]
        #expect(statuses == [200, 200])
        // One asked the server, the other took its tokens from the vault.
        var firstIterator = firstEvents.makeAsyncIterator(), secondIterator = secondEvents.makeAsyncIterator()
        let outcomes = [await firstIterator.next(), await secondIterator.next()].compactMap { $0 }
        #expect(Set(outcomes) == [.refreshed, .adoptedTokensFromVault])
        #expect(fixture.server.counters.refreshRequests == 1)
        #expect(fixture.server.counters.reuseDetections == 0)
        #expect(await first.currentTokens?.refreshToken == (await second.currentTokens?.refreshToken))
    }

    @Test func aRefusalDeletesOnlyTheRefusedTokens() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        fixture.server.revokeGrants(of: "alice")
        fixture.server.expireAllAccessTokens()
        // While the refusal is on its way, someone who does not take the lock (a sign-in in
        // another program) stores new tokens.
        let newer = try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport())
        let store = fixture.store()
        fixture.server.refusalHook.withLock { $0 = { try? store.save(newer) } }

        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) { try await client.send(fixture.resource) }
        await #expect(try fixture.store().load() == newer)
    }

    @Test func aSignOutElsewhereIsFollowedAtTheNextRefresh() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let stayed = try await fixture.signedInClient()
        let leaving = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())
        try await leaving.signOut()
        fixture.server.expireAllAccessTokens()

        await #expect(throws: AuthError.signedOut(.removedFromVault)) { try await stayed.send(fixture.resource) }
        #expect(fixture.server.counters.refreshRequests == 0)
        #expect(fixture.server.counters.revocations == 1)
    }

    @Test func theLockFileIsPrivateAndOnlyOurOwn() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        try await client.refreshNow()
        let lockPath = fixture.vaultPath + ".vaultauth-lock"
        let attributes = try FileManager.default.attributesOfItem(atPath: lockPath)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)

        // A symlink planted in its place is not followed: a typed error, the tokens kept.
        try FileManager.default.removeItem(atPath: lockPath)
        try FileManager.default.createSymbolicLink(atPath: lockPath, withDestinationPath: "\(fixture.directory)/elsewhere")
        await #expect(throws: AuthError.storage(.lock(path: lockPath, errno: ELOOP))) { try await client.refreshNow() }
        #expect(!FileManager.default.fileExists(atPath: "\(fixture.directory)/elsewhere"))
        #expect(await client.isSignedIn)
        await #expect(try fixture.store().load() != nil)
    }
}

/// RFC 6749 section 5.2: which token-endpoint errors sign the user out.
@Suite struct ErrorTaxonomyTests {
    @Test(arguments: [(401, "invalid_client"), (400, "unauthorized_client"), (400, "unsupported_grant_type"),
                      (400, "invalid_scope"), (400, "invalid_request")])
    func clientErrorsAreConfigurationErrorsThatKeepTheTokens(_ status: Int, _ code: String) async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let before = try #require(await client.currentTokens)
        fixture.server.configure { $0.refreshError = (status, code) }

        await #expect(throws: AuthError.configuration(oauthError: try #require(OAuthErrorCode(rawValue: code)))) { try await client.refreshNow() }
        #expect(await client.currentState == .signedIn)
        await #expect(try fixture.store().load() == before)
        // Fixed on the server's side, the same refresh token works: it was never refused.
        fixture.server.configure { $0.refreshError = nil }
        try await client.refreshNow()
        #expect(fixture.server.counters.refreshes == 1)
    }

    @Test func invalidGrantIsADeadCredential() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        fixture.server.configure { $0.refreshError = (400, "invalid_grant") }
        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) { try await client.refreshNow() }
        await #expect(try fixture.store().load() == nil)
    }
}

/// The refresh cap counts early refreshes per sign-in; due ones are the server's schedule.
@Suite struct RefreshLimitTests {
    @Test func shortLivedTokensInNormalUseNeverHitTheCap() async throws {
        let fixture = try await AuthFixture.make { $0.accessTokenLifetime = 5 }
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        // Every token the client holds is due (3 s into a 5 s life, past half of it): each
        // request refreshes first, far more often than 6 times a minute.
        fixture.clock.advance(by: 3)
        for _ in 0..<20 {
            #expect(try await client.send(fixture.resource).status == 200)
        }
        #expect(fixture.server.counters.refreshes == 20)
    }

    @Test func aSignInStartsTheCountAgain() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(configuration: fixture.configuration(maxRefreshes: 2))
        let always401 = HTTPRequest(url: fixture.server.alwaysUnauthorizedURL)
        await #expect(throws: AuthError.unauthorized) { try await client.send(always401) }
        await #expect(throws: AuthError.unauthorized) { try await client.send(always401) }
        await #expect(throws: AuthError.refreshLimitReached) { try await client.send(always401) }
        #expect(fixture.server.counters.refreshes == 2)

        try await client.signIn(with: try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport()))
        await #expect(throws: AuthError.unauthorized) { try await client.send(always401) }
        #expect(fixture.server.counters.refreshes == 3)
    }
}

/// The authorization-code request: RFC 7636's S256 and what a redirect may bring back.
@Suite struct AuthorizationRequestTests {
    let endpoint = URL(string: "https://auth.example.com/authorize")!
    let redirect = URL(string: "http://127.0.0.1:8765/callback")!

    @Test func theChallengeIsRFC7636AppendixB() {
        let request = AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "app", redirectURI: redirect, scope: "read write",
                                           state: "xyz", codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(request.codeChallenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let query = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
        #expect(query == ["response_type": "code", "client_id": "app", "redirect_uri": redirect.absoluteString, "state": "xyz",
                          "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
                          "scope": "read write"])
        #expect(!request.description.contains("xyz"))
        #expect(!request.description.contains("dBjft"))
    }

    @Test func freshRequestsHaveUnguessableStateAndVerifier() {
        let a = AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "app", redirectURI: redirect)
        let b = AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "app", redirectURI: redirect)
        #expect(a.state != b.state)
        #expect(a.codeVerifier != b.codeVerifier)
        #expect(a.codeVerifier.count == 43)
    }

    @Test func theRedirectIsChecked() throws {
        let request = AuthorizationRequest(authorizationEndpoint: endpoint, clientID: "app", redirectURI: redirect, state: "s1", codeVerifier: "v")
        #expect(try request.code(from: URL(string: "http://127.0.0.1:8765/callback?code=c1&state=s1")!) == "c1")
        #expect(throws: AuthorizationError.stateMismatch) { try request.code(from: URL(string: "http://127.0.0.1:8765/callback?code=c1&state=s2")!) }
        #expect(throws: AuthorizationError.stateMismatch) { try request.code(from: URL(string: "http://127.0.0.1:8765/callback?code=c1")!) }
        #expect(throws: AuthorizationError.wrongRedirect) { try request.code(from: URL(string: "http://127.0.0.1:9999/callback?code=c1&state=s1")!) }
        #expect(throws: AuthorizationError.denied(.accessDenied)) {
            try request.code(from: URL(string: "http://127.0.0.1:8765/callback?error=access_denied&state=s1")!)
        }
        #expect(throws: AuthorizationError.missingCode) { try request.code(from: URL(string: "http://127.0.0.1:8765/callback?state=s1")!) }
    }
}
