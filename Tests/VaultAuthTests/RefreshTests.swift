import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// Refresh against the real server: proactive, on 401, shared, bounded.
@Suite struct RefreshTests {
    @Test func proactiveRefreshBeforeExpiryPersistsRotatedTokens() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let first = try #require(await client.currentTokens)
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshes == 0)

        fixture.clock.advance(by: 250)   // 50 s left of 300: inside the 60 s leeway
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshes == 1)
        #expect(fixture.server.counters.resourceUnauthorized == 0)
        let second = try #require(await client.currentTokens)
        #expect(second.refreshToken != first.refreshToken)
        #expect(try fixture.store().load() == second)
        #expect(fixture.server.counters.bearerOnTokenEndpoint == 0)
    }

    @Test func refreshOn401ThenRetryOnce() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        fixture.server.expireAllAccessTokens()   // the client still believes its token is fresh
        let response = try await client.send(fixture.resource)
        #expect(response.status == 200)
        let counters = fixture.server.counters
        #expect(counters.refreshes == 1)
        #expect(counters.resourceUnauthorized == 1)
        #expect(counters.resourceOK == 1)
        #expect(counters.bearerOnTokenEndpoint == 0)
    }
}
