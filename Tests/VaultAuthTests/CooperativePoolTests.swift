import Foundation
import Testing
@testable import VaultKit
import VaultAuth

/// AuthClient's vault work (loads, conditional writes, the sign-out's delete) goes through
/// the vault's async calls, so none of it runs on a thread of the cooperative pool: shown
/// by VaultKit's debug probe in every SQLite statement, not by timing.
@Suite struct CooperativePoolTests {
    @Test func refreshAndSignOutDoNoBlockingWorkInsideATask() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        // Set-up (the password saved for the login, the client's first load) is the test's
        // own blocking work: watching starts after it.
        let client = try await fixture.signedInClient()
        BlockingWorkProbe.watch(fixture.vaultPath)
        defer { _ = BlockingWorkProbe.stopWatching(fixture.vaultPath) }

        fixture.server.expireAllAccessTokens()
        _ = try await client.send(fixture.resource)
        try await client.refreshNow()
        try await client.signOut()

        let counted = BlockingWorkProbe.counted(fixture.vaultPath)
        #expect(counted.outsideTasks > 0, "the refreshes and the sign-out read and wrote the vault")
        #expect(counted.insideTasks == 0, "vault work on the cooperative pool: \(counted.insideTasks) statements")
        #expect(try await fixture.store(account: "alice").load() == nil)
    }
}
