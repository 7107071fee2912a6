import Foundation
import Synchronization
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
        let recorder = await StateRecorder(client)
        let first = try #require(await client.currentTokens)
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshes == 0)

        fixture.clock.advance(by: 250)   // 50 s left of 300: inside the 60 s leeway
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshes == 1)
        #expect(fixture.server.counters.resourceUnauthorized == 0)
        let second = try #require(await client.currentTokens)
        #expect(second.refreshToken != first.refreshToken)
        await #expect(try fixture.store().load() == second)
        #expect(fixture.server.counters.bearerOnTokenEndpoint == 0)
        #expect(await recorder.wait { _ in recorder.states.count >= 3 })
        #expect(recorder.states == [.signedIn, .refreshing, .signedIn])
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

/// Fifty requests across an expiry share one refresh, and nobody sees a token before it is in the vault.
@Suite struct ConcurrentRefreshTests {
    /// Records any access token the server saw before the client had stored it.
    static func watchPersistBeforeUse(_ fixture: AuthFixture) -> Locked<[String]> {
        let violations = Locked<[String]>([])
        let store = fixture.store()
        fixture.server.firstUseHook.withLock {
            $0 = { token in
                if (try? store.load())?.accessToken != token { violations.withLock { $0.append("used before stored") } }
            }
        }
        return violations
    }

    @Test(arguments: ["proactive", "reactive"])
    func fiftyConcurrentRequestsAcrossAnExpiryCauseOneRefresh(_ kind: String) async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let violations = Self.watchPersistBeforeUse(fixture)
        let client = try await fixture.signedInClient()
        #expect(try await client.send(fixture.resource).status == 200)

        if kind == "proactive" {
            fixture.clock.advance(by: 301)   // expired for both the client and the server
        } else {
            fixture.server.expireAllAccessTokens()   // the client learns only from the 401s
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await client.send(fixture.resource).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 50)
        #expect(statuses.allSatisfy { $0 == 200 })
        let counters = fixture.server.counters
        #expect(counters.refreshRequests == 1)
        #expect(counters.refreshes == 1)
        #expect(counters.reuseDetections == 0)
        #expect(counters.bearerOnTokenEndpoint == 0)
        #expect(violations.withLock { $0 }.isEmpty)
        await #expect(try fixture.store().load() == (await client.currentTokens))
    }
}

/// What happens when the server says no, or keeps saying 401, or is down.
@Suite struct RefusalAndLoopTests {
    @Test func refusedRefreshSignsOutAndIsNeverRepeated() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let recorder = await StateRecorder(client)
        let stale = try #require(await client.currentTokens)
        fixture.server.revokeGrants(of: "alice")
        fixture.server.expireAllAccessTokens()

        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) { try await client.send(fixture.resource) }
        #expect(await client.currentTokens == nil)
        await #expect(try fixture.store().load() == nil)
        #expect(fixture.server.counters.refreshRequests == 1)
        #expect(await recorder.wait { $0 == .signedOut(.refreshRefused(oauthError: .invalidGrant)) })
        #expect(recorder.states.contains(.refreshing))

        // Signed out: later requests fail at once, without asking the server again.
        await #expect(throws: AuthError.signedOut(.refreshRefused(oauthError: .invalidGrant))) { try await client.send(fixture.resource) }
        // Even if the app puts the refused tokens back, that refresh token is not presented again.
        try await client.signIn(with: stale)
        await #expect(throws: AuthError.signedOut(.refreshRefused(.previouslyRefused))) { try await client.send(fixture.resource) }
        #expect(fixture.server.counters.refreshRequests == 1)
    }

    @Test func refusedRefreshFallsBackToStoredCredentialsLogin() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(strategy: fixture.oauthStrategy(relogin: true))
        fixture.server.revokeGrants(of: "alice")
        fixture.server.expireAllAccessTokens()

        #expect(try await client.send(fixture.resource).status == 200)
        let counters = fixture.server.counters
        #expect(counters.refreshRequests == 1)
        #expect(counters.passwordLogins == 2)   // the first sign-in and the fallback
        #expect(await client.currentState == .signedIn)
        await #expect(try fixture.store().load() == (await client.currentTokens))
    }

    @Test func refusedReloginSignsOut() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(strategy: fixture.oauthStrategy(relogin: true))
        fixture.server.configure { $0.users["alice"] = "changed elsewhere" }
        fixture.server.revokeGrants(of: "alice")
        fixture.server.expireAllAccessTokens()

        await #expect(throws: AuthError.signedOut(.reloginRefused(oauthError: .invalidGrant))) { try await client.send(fixture.resource) }
        await #expect(throws: AuthError.signedOut(.reloginRefused(oauthError: .invalidGrant))) { try await client.send(fixture.resource) }
        #expect(fixture.server.counters.refreshRequests == 1)
        #expect(fixture.server.counters.refusedLogins == 1)
        await #expect(try fixture.store().load() == nil)
    }

    @Test func a401LoopIsBounded() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(configuration: fixture.configuration(maxRefreshes: 3))
        let always401 = HTTPRequest(url: fixture.server.alwaysUnauthorizedURL)

        // One refresh and one retry per request...
        await #expect(throws: AuthError.unauthorized) { try await client.send(always401) }
        #expect(fixture.server.counters.refreshes == 1)
        #expect(fixture.server.counters.alwaysUnauthorizedHits == 2)
        // ...and at most three refreshes per window, however many requests.
        var limited = 0
        for _ in 0..<9 {
            do {
                _ = try await client.send(always401)
            } catch {
                // A switch over the code, not `catch AuthError.refreshLimitReached`: expression
                // patterns over a typed-throws call in this loop hang Swift 6.3's SIL passes.
                switch error.code {
                case .refreshLimitReached: limited += 1
                case .unauthorized: break
                default: throw error
                }
            }
        }
        #expect(fixture.server.counters.refreshes == 3)
        #expect(limited == 7)
        #expect(fixture.server.counters.alwaysUnauthorizedHits == 2 * 3 + 7)
        // The tokens are fine for other endpoints: nobody was signed out.
        #expect(try await client.send(fixture.resource).status == 200)
    }

    @Test(arguments: [503, 429])
    func transientFailuresKeepTheTokens(_ status: Int) async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let before = try #require(await client.currentTokens)
        fixture.server.configure { $0.refreshFailureStatus = status }
        fixture.server.expireAllAccessTokens()

        await #expect(throws: AuthError.transient(httpStatus: status)) { try await client.send(fixture.resource) }
        #expect(await client.currentTokens == before)
        await #expect(try fixture.store().load() == before)
        #expect(await client.currentState == .signedIn)

        fixture.server.configure { $0.refreshFailureStatus = nil }
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshes == 1)
    }

    @Test func unreachableTokenEndpointIsTransient() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let dead = OAuth2RefreshStrategy(tokenEndpoint: URL(string: "http://127.0.0.1:9/oauth/token")!, client: .none(clientID: "x"))
        let client = try await fixture.signedInClient(strategy: dead)
        fixture.server.expireAllAccessTokens()
        await #expect(throws: AuthError.transient(.network)) { try await client.send(fixture.resource) }
        #expect(await client.isSignedIn)
    }

    @Test func tokensThatCannotBePersistedComeBackInTheError() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        await fixture.vault.close()
        fixture.server.expireAllAccessTokens()
        let error = try await #require(throws: AuthError.self) { try await client.send(fixture.resource) }
        #expect(error.code == .tokensNotPersisted)
        #expect(error.storageError == .vault(.closed))
        let tokens = try #require(error.unpersistedTokens)
        #expect(fixture.server.isLive(refreshToken: try #require(tokens.refreshToken)))
        #expect(await client.currentTokens == tokens)
    }
}

/// Sign-out and new logins while a refresh is in flight.
@Suite struct EpochTests {
    @Test func logoutDuringRefreshStaysLoggedOut() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let recorder = await StateRecorder(client)
        let arrived = Event(), proceed = Event()
        fixture.server.refreshHook.withLock { $0 = { arrived.signal(); await proceed.wait() } }
        fixture.server.expireAllAccessTokens()

        let request = Task { try await client.send(fixture.resource) }
        #expect(await arrived.wait(seconds: 30))
        // The sign-out takes effect in memory at once; it then waits for the token request in
        // flight (which holds the cross-process lock) to revoke what the vault holds.
        let signingOut = Task { try await client.signOut() }
        #expect(await recorder.wait { $0 == .signedOut(.userSignedOut) })
        proceed.signal()
        try await signingOut.value

        let result = await request.result
        #expect(throws: AuthError.signedOut(.userSignedOut)) { try result.get() }
        #expect(await client.currentTokens == nil)
        await #expect(try fixture.store().load() == nil)
        #expect(await client.currentState == .signedOut(.userSignedOut))
        #expect(recorder.states.last == .signedOut(.userSignedOut))
        // The tokens the server issued to the abandoned refresh were revoked, not kept anywhere.
        let families = fixture.server.state.withLock { $0.families.values.map(\.revoked) }
        #expect(families.allSatisfy { $0 })
        await #expect(throws: AuthError.signedOut(.userSignedOut)) { try await client.send(fixture.resource) }
    }

    @Test func newLoginDuringRefreshWins() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient()
        let arrived = Event(), proceed = Event()
        fixture.server.refreshHook.withLock { $0 = { arrived.signal(); await proceed.wait() } }
        fixture.server.expireAllAccessTokens()

        let request = Task { try await client.send(fixture.resource) }
        #expect(await arrived.wait(seconds: 30))
        let fresh = try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport())
        // The sign-in waits for the lock the refresh holds; the refresh, once answered, finds a
        // new epoch and discards its result.
        let signingIn = Task { try await client.signIn(with: fresh) }
        proceed.signal()
        try await signingIn.value

        let result = await request.result
        #expect(throws: AuthError.sessionChanged) { try result.get() }
        #expect(await client.currentTokens == fresh)
        await #expect(try fixture.store().load() == fresh)
        #expect(try await client.send(fixture.resource).status == 200)
    }
}

/// Seed 004's strategy on its own: every refresh is a login with the password stored in the vault.
@Suite struct StoredCredentialsTests {
    @Test func reloginWithStoredCredentialsOn401() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let client = try await fixture.signedInClient(strategy: fixture.credentialsStrategy())
        fixture.server.expireAllAccessTokens()
        #expect(try await client.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.passwordLogins == 2)
        #expect(fixture.server.counters.refreshRequests == 0)
    }

    @Test func signInWithStoredCredentials() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        try fixture.credentials().save(password: "wonderland")
        let client = try AuthClient(store: fixture.store(), strategy: fixture.credentialsStrategy(), configuration: fixture.configuration())
        #expect(await client.currentState == .signedOut(.neverSignedIn))
        try await client.signIn()
        #expect(try await client.send(fixture.resource).status == 200)

        try fixture.credentials().save(password: "wrong")
        let wrong = try AuthClient(store: fixture.store(account: "alice2"), strategy: fixture.credentialsStrategy(), configuration: fixture.configuration())
        await #expect(throws: AuthError.signedOut(.reloginRefused(oauthError: .invalidGrant))) { try await wrong.signIn() }
        let none = try AuthClient(store: fixture.store(account: "bob"), strategy: fixture.credentialsStrategy(account: "bob"), configuration: fixture.configuration())
        await #expect(throws: AuthError.signedOut(.reloginRefused(.noStoredCredentials))) { try await none.signIn() }
    }
}

/// Two clients on one vault item, as two processes sharing a vault would be.
@Suite struct SharedVaultTests {
    @Test func aClientPicksUpTokensAnotherClientRotated() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let first = try await fixture.signedInClient()
        let second = try AuthClient(store: fixture.store(), strategy: fixture.oauthStrategy(), configuration: fixture.configuration())
        #expect(await second.currentTokens == (await first.currentTokens))

        fixture.server.expireAllAccessTokens()
        #expect(try await first.send(fixture.resource).status == 200)
        // The second one's refresh token was rotated away; presenting it would trip reuse
        // detection and end the grant for both. It reads the vault first instead.
        #expect(try await second.send(fixture.resource).status == 200)
        #expect(fixture.server.counters.refreshRequests == 1)
        #expect(fixture.server.counters.reuseDetections == 0)
        #expect(await second.currentTokens == (await first.currentTokens))
    }
}

/// The default transport against the real server.
@Suite struct TransportTests {
    @Test func cancellingARequestToAHungServerReturnsPromptly() async throws {
        let fixture = try await AuthFixture.make()
        let seen = Event(), answer = Event()
        defer {
            answer.signal()
            fixture.server.stop()
        }
        fixture.server.releaseHook.withLock { $0 = { seen.signal(); await answer.wait() } }
        let transport = URLSessionTransport()
        let request = Task {
            try await transport.send(HTTPRequest(method: "DELETE", url: fixture.server.sessionsURL.appendingPathComponent("s")))
        }
        #expect(await seen.wait(seconds: 30))
        request.cancel()
        let outcome = try await withTimeout(30) { await request.result }
        #expect(throws: (any Error).self) { try outcome.get() }
    }

    @Test func statusCodesAreResponsesNotErrors() async throws {
        let fixture = try await AuthFixture.make()
        defer { fixture.server.stop() }
        let response = try await URLSessionTransport().send(HTTPRequest(url: fixture.server.resourceURL))
        #expect(response.status == 401)
        #expect(response.header("content-type") == "application/json")
    }
}
