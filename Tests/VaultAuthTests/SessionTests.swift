import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit
import ServiceLifecycle
import ServiceLifecycleTestKit

/// Single-device sessions against the server's leases.
@Suite struct SessionTests {
    /// A second device: its own vault, the same account.
    func secondDevice(_ fixture: AuthFixture, name: String = "device-b") throws -> AuthClient {
        let vault = try Vault.create(at: "\(fixture.directory)/\(name).vault", key: .random())
        let store = TokenStore(vault: vault, issuer: fixture.issuer, account: "alice")
        let strategy = OAuth2RefreshStrategy(tokenEndpoint: fixture.server.tokenURL, client: .none(clientID: "vaultauth-tests"),
                                             revocationEndpoint: fixture.server.revokeURL)
        return try AuthClient(store: store, strategy: strategy, configuration: fixture.configuration(session: name))
    }

    func passwordLogin(_ fixture: AuthFixture) async throws -> TokenSet {
        try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport())
    }

    @Test func claimsAtLoginKeepsAliveAndReleasesAtLogout() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(configuration: fixture.configuration(session: "device-a"))
        let lease = try #require(fixture.server.lease(of: "alice"))
        #expect(lease.device == "device-a")
        await #expect(try fixture.store().load()?.sessionID == lease.id)

        try await client.keepSessionAlive()
        #expect(fixture.server.counters.keepAlives == 1)

        // The lease lapsed (the program was not running): the next keep-alive claims a new one.
        fixture.clock.advance(by: 301)
        try await client.keepSessionAlive()
        #expect(fixture.server.counters.claims == 2)
        await #expect(try fixture.store().load()?.sessionID == fixture.server.lease(of: "alice")?.id)

        try await client.signOut()
        #expect(fixture.server.lease(of: "alice") == nil)
        #expect(fixture.server.counters.releases == 1)
        #expect(fixture.server.counters.revocations >= 1)
    }

    @Test func secondDeviceIsRefusedWhileTheFirstHoldsTheSession() async throws {
        let fixture = try await AuthFixture.make { $0.policy = .refuseSecond }
        defer { fixture.server.stop() }
        let first = try await fixture.signedInClient(configuration: fixture.configuration(session: "device-a"))
        let second = try secondDevice(fixture)
        let recorder = await StateRecorder(second)

        await #expect(throws: AuthError.loggedInOnAnotherDevice) { try await second.signIn(with: try await passwordLogin(fixture)) }
        #expect(await second.currentState == .signedOut(.loggedInOnAnotherDevice))
        #expect(await recorder.wait { $0 == .signedOut(.loggedInOnAnotherDevice) })
        #expect(await second.currentTokens == nil)
        #expect(fixture.server.counters.claimConflicts == 1)
        #expect(try await first.send(fixture.resource).status == 200)

        // Once the first device logs out, the second may log in.
        try await first.signOut()
        try await second.signIn(with: try await passwordLogin(fixture))
        #expect(fixture.server.lease(of: "alice")?.device == "device-b")
        #expect(try await second.send(fixture.resource).status == 200)
    }

    @Test func latestLoginWinsAndTheFirstDeviceIsSignedOut() async throws {
        let fixture = try await AuthFixture.make { $0.policy = .takeOver }
        defer { fixture.server.stop() }
        let first = try await fixture.signedInClient(strategy: fixture.oauthStrategy(relogin: true),
                                                     configuration: fixture.configuration(session: "device-a"))
        let recorder = await StateRecorder(first)
        let second = try secondDevice(fixture)
        try await second.signIn(with: try await passwordLogin(fixture))
        let logins = fixture.server.counters.passwordLogins

        await #expect(throws: AuthError.sessionTakenOver) { try await first.send(fixture.resource) }
        #expect(await first.currentState == .signedOut(.sessionTakenOver))
        #expect(await recorder.wait { $0 == .signedOut(.sessionTakenOver) })
        await #expect(try fixture.store().load() == nil)
        // No ping-pong: the first device did not log in again with its stored password.
        #expect(fixture.server.counters.passwordLogins == logins)
        await #expect(throws: AuthError.signedOut(.sessionTakenOver)) { try await first.send(fixture.resource) }
        #expect(try await second.send(fixture.resource).status == 200)
    }

    @Test func takenOverSessionEndsAtTheNextRefreshToo() async throws {
        let fixture = try await AuthFixture.make { $0.policy = .takeOver }
        defer { fixture.server.stop() }
        let first = try await fixture.signedInClient(configuration: fixture.configuration(session: "device-a"))
        let second = try secondDevice(fixture)
        try await second.signIn(with: try await passwordLogin(fixture))
        await #expect(throws: AuthError.sessionTakenOver) { try await first.refreshNow() }
        #expect(await first.currentState == .signedOut(.sessionTakenOver))
    }

    @Test func keepAliveOfATakenOverSessionSignsOut() async throws {
        let fixture = try await AuthFixture.make { $0.policy = .takeOver }
        defer { fixture.server.stop() }
        let first = try await fixture.signedInClient(configuration: fixture.configuration(session: "device-a"))
        let second = try secondDevice(fixture)
        try await second.signIn(with: try await passwordLogin(fixture))
        await #expect(throws: AuthError.sessionTakenOver) { try await first.keepSessionAlive() }
        #expect(await first.isSignedIn == false)
    }
}

/// The lifecycle service: keep-alives while running, release at graceful shutdown.
@Suite struct SessionServiceTests {
    @Test func keepsAliveWhileRunningAndReleasesOnGracefulShutdown() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        var configuration = fixture.configuration(session: "device-a")
        configuration.session?.keepAliveInterval = .milliseconds(20)
        let client = try await fixture.signedInClient(configuration: configuration)
        let server = fixture.server

        try await testGracefulShutdown { trigger in
            let service = Task { try await AuthSessionService(client: client).run() }
            let renewed = Event()
            let watcher = Task {
                while server.counters.keepAlives < 3 { try await Task.sleep(for: .milliseconds(10)) }
                renewed.signal()
            }
            #expect(await renewed.wait(seconds: 30))
            watcher.cancel()
            trigger.triggerGracefulShutdown()
            try await withTimeout(30) { try await service.value }
        }
        #expect(fixture.server.counters.releases == 1)
        #expect(fixture.server.lease(of: "alice") == nil)
        // Still signed in: the next start claims a new session with the same tokens.
        #expect(await client.isSignedIn)
        await #expect(try fixture.store().load()?.sessionID == nil)
    }
}

extension SessionTests {
    @Test func signOutReleasesTheLeaseEvenWithAnExpiredAccessToken() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(configuration: fixture.configuration(session: "device-a"))
        fixture.server.expireAllAccessTokens()
        try await client.signOut()
        #expect(fixture.server.counters.releases == 1)
        #expect(fixture.server.lease(of: "alice") == nil)
        // The refresh made for the release left nothing usable behind.
        let live = fixture.server.state.withLock { state in state.families.values.filter { !$0.revoked }.count }
        #expect(live == 0)
    }
}

extension SessionTests {
    @Test func leaseEventsAreReported() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        try fixture.credentials().save(password: "wonderland")
        let client = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration(session: "device-a"))
        let events = await client.events()
        try await client.signIn(with: try await passwordLogin(fixture))
        try await client.keepSessionAlive()
        try await client.signOut()

        var seen: [AuthEvent] = []
        for await event in events {
            seen.append(event)
            if seen.count == 5 { break }
        }
        #expect(seen == [.signedIn, .leaseClaimed, .leaseRenewed, .signedOut(.userSignedOut), .leaseReleased])
        #expect(fixture.server.counters.releases == 1)
    }
}
