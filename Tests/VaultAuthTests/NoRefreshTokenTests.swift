import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// Tokens without a refresh token (what a client-credentials grant usually answers) under the
/// refresh strategy: used until they expire, not thrown away at the refresh leeway.
@Suite struct NoRefreshTokenTests {
    /// Tokens the server accepts, with their refresh token dropped.
    func accessOnly(_ fixture: AuthFixture) async throws -> TokenSet {
        try fixture.credentials().save(password: "wonderland")
        var tokens = try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport())
        tokens.refreshToken = nil
        return tokens
    }

    @Test func aValidTokenIsUsedUntilItExpiresThenTheClientSignsOut() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())
        let tokens = try await accessOnly(fixture)
        try await client.signIn(with: tokens)
        try await client.refreshNow()    // nothing to refresh with: kept, no request
        #expect(await client.currentTokens == tokens)

        fixture.clock.advance(by: 250)   // 50 s left of 300: inside the 60 s leeway, still valid
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(await client.currentTokens == tokens)
        await #expect(try fixture.store().load() == tokens)
        #expect(fixture.server.counters.refreshRequests == 0)

        fixture.clock.advance(by: 60)    // expired: nothing to renew it with
        await #expect(throws: AuthError.signedOut(.refreshRefused(.noRefreshToken))) { try await client.send(fixture.resource) }
        await #expect(try fixture.store().load() == nil)
        #expect(fixture.server.counters.refreshRequests == 0)
        #expect(fixture.server.counters.resourceOK == 1)
    }

    /// A rejected token with nothing to renew it is the end of the session, at once.
    @Test func aRejectedTokenWithoutRefreshTokenSignsOut() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())
        try await client.signIn(with: try await accessOnly(fixture))
        fixture.server.expireAllAccessTokens()
        await #expect(throws: AuthError.signedOut(.refreshRefused(.noRefreshToken))) { try await client.send(fixture.resource) }
        #expect(fixture.server.counters.refreshRequests == 0)
    }
}
