import Foundation
import Testing
import VaultAuth
import VaultKit

/// A caller's cancellation ends its own wait, never the refresh other callers share.
@Suite struct CancellationTests {
    @Test func aCancelledCallerStopsWaitingWhileTheRefreshItStartedLands() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let before = await client.currentTokens
        let arrived = Event(), proceed = Event()
        fixture.server.refreshHook.withLock { $0 = { arrived.signal(); await proceed.wait() } }
        fixture.server.expireAllAccessTokens()   // the client still believes its token is fresh

        // This request gets a 401 and starts the refresh, which the server holds.
        let returned = Event()
        let cancelled = Task {
            defer { returned.signal() }
            return try await client.send(fixture.resource)
        }
        #expect(await arrived.wait(seconds: 30))
        // This one gets a 401 too and waits for the same refresh.
        let sharing = Task { try await client.send(fixture.resource) }
        cancelled.cancel()

        // The cancelled request returns while its token request is still held at the server.
        #expect(await returned.wait(seconds: 30))
        proceed.signal()
        await #expect(throws: AuthError.transient(.cancelled)) { try await cancelled.value }

        #expect(try await sharing.value.status == 200)
        // The refresh went on: one token request, its tokens current and durable.
        #expect(fixture.server.counters.refreshRequests == 1)
        #expect(fixture.server.counters.reuseDetections == 0)
        let after = await client.currentTokens
        #expect(after != nil && after != before)
        await #expect(try fixture.store().load() == after)
    }
}
