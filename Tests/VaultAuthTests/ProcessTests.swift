import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// Real client processes: killed with SIGKILL in the middle of a refresh, stopped with SIGTERM.
@Suite(.serialized) struct ProcessTests {
    static let client = TestPaths.executable("vault-auth-test-client")

    func environment(_ fixture: AuthFixture, relogin: Bool = true, extra: [String: String] = [:]) -> [String: String] {
        var overrides = ["VAULT_AUTH_TEST_KEY": fixture.vaultKey.hexEncodedString()].merging(extra) { $1 }
        if !relogin { overrides["VAULT_AUTH_TEST_NO_RELOGIN"] = "1" }
        return ChildProcess.cleanEnvironment(overrides)
    }

    /// Starts the client in `mode` against the fixture's server and vault.
    func start(_ fixture: AuthFixture, _ mode: String, _ extra: [String] = [], relogin: Bool = true,
               environment extraEnvironment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(Self.client, [mode, fixture.vaultPath, fixture.server.baseURL.absoluteString] + extra,
                         environment: environment(fixture, relogin: relogin, extra: extraEnvironment))
    }

    /// A fresh process on the same vault: it must end signed in or cleanly signed out, in time.
    func restartAndCheck(_ fixture: AuthFixture, relogin: Bool = true) async throws -> ProcessResult {
        let check = try start(fixture, "check", relogin: relogin)
        let result = try await offPool { check.wait(timeout: .seconds(60)) }
        #expect(result.status == 0 || result.status == 3, "stuck or failed: \(result.status) \(result.stdout) \(result.stderr)")
        return result
    }

    func fixtureWithPassword(_ label: String = #function) async throws -> AuthFixture {
        let fixture = try await AuthFixture.make(label)
        try fixture.credentials().save(password: "wonderland")
        return fixture
    }

    @Test(arguments: [true, false])
    func killedWhileTheServerRotatesRecoversCleanly(_ relogin: Bool) async throws {
        let fixture = try await fixtureWithPassword()
        defer { fixture.server.stop() }
        let arrived = Event(), proceed = Event()
        fixture.server.refreshHook.withLock { $0 = { arrived.signal(); await proceed.wait() } }

        let child = try start(fixture, "refresh-loop", relogin: relogin)
        #expect(await arrived.wait(seconds: 60), "the child never refreshed: \(String(decoding: child.outputSoFar, as: UTF8.self))")
        // The server has rotated the refresh token; the child dies before it hears the answer.
        child.send(SIGKILL)
        let killed = try await offPool { child.wait(timeout: .seconds(30)) }
        #expect(killed.signal == SIGKILL)
        fixture.server.refreshHook.withLock { $0 = nil }
        proceed.signal()

        // The vault still holds the pre-rotation refresh token; presenting it trips reuse
        // detection, which the client treats as a refusal: log in again, or sign out cleanly.
        let result = try await restartAndCheck(fixture, relogin: relogin)
        if relogin {
            #expect(result.stdout.hasPrefix("SIGNED_IN"), "\(result.stdout)")
        } else {
            #expect(result.stdout.hasPrefix("SIGNED_OUT"), "\(result.stdout)")
            await #expect(try fixture.store().load() == nil)
        }
        #expect(fixture.server.counters.reuseDetections == 1)
        // And it is not stuck: a second restart agrees.
        let again = try await restartAndCheck(fixture, relogin: relogin)
        #expect(again.status == result.status)
    }

    /// Killed while its request with the third access token waits for the API's answer: the
    /// tokens were rotated and stored, and no refresh is in flight. The kill lands at a hook the
    /// test holds, not after a count of uses: the child's next refresh cannot have started.
    @Test func killedRightAfterUsingRotatedTokensStaysSignedIn() async throws {
        let fixture = try await fixtureWithPassword()
        let third = Event(), killed = Event()
        defer {
            killed.signal()
            fixture.server.stop()
        }
        let violations = Locked<[String]>([])
        let useCount = Locked(0)
        let path = fixture.vaultPath, key = fixture.vaultKey, issuer = fixture.issuer
        fixture.server.firstUseHook.withLock {
            $0 = { token in
                // Read the child's vault from this process: the token must be stored already.
                let stored = try? await TokenStore(vault: Vault.open(at: path, key: key), issuer: issuer, account: "alice").load()
                if stored?.accessToken != token { violations.withLock { $0.append("token used before it was stored") } }
                guard useCount.withLock({ $0 += 1; return $0 }) == 3 else { return }
                // Hold the child's request until it is dead: it cannot go on to its next refresh.
                third.signal()
                await killed.wait()
            }
        }
        let child = try start(fixture, "refresh-loop")
        #expect(await third.wait(seconds: 60), "\(String(decoding: child.outputSoFar, as: UTF8.self))")
        child.send(SIGKILL)
        let result = try await offPool { child.wait(timeout: .seconds(30)) }
        #expect(result.signal == SIGKILL)
        fixture.server.firstUseHook.withLock { $0 = nil }
        killed.signal()
        let refreshesAtKill = fixture.server.counters.refreshRequests

        let check = try await restartAndCheck(fixture)
        #expect(check.stdout.hasPrefix("SIGNED_IN"), "\(check.stdout)")
        #expect(fixture.server.counters.reuseDetections == 0)
        // The restart's refresh presented the stored token, which the server had not rotated yet.
        #expect(fixture.server.counters.refreshRequests == refreshesAtKill + 1)
        #expect(violations.withLock { $0 }.isEmpty)
    }

    @Test func killedAtArbitraryMomentsNeverGetsStuck() async throws {
        let fixture = try await fixtureWithPassword()
        defer { fixture.server.stop() }
        for round in 0..<4 {
            let child = try start(fixture, "refresh-loop")
            #expect(try await offPool { child.waitForOutput(containing: "OK", timeout: .seconds(60)) }, "round \(round)")
            // Somewhere in a refresh-use cycle (each takes a few milliseconds).
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...40)))
            child.send(SIGKILL)
            _ = try await offPool { child.wait(timeout: .seconds(30)) }
            _ = try await restartAndCheck(fixture)
        }
        #expect(fixture.server.counters.refreshes > 0)
    }

    @Test func sessionIsReleasedWhenTheProcessGetsSIGTERM() async throws {
        let fixture = try await fixtureWithPassword()
        defer { fixture.server.stop() }
        let child = try start(fixture, "serve", ["child-device"])
        #expect(try await offPool { child.waitForOutput(containing: "READY", timeout: .seconds(60)) },
                "\(String(decoding: child.outputSoFar, as: UTF8.self))")
        #expect(fixture.server.lease(of: "alice")?.device == "child-device")

        // Another device is refused while the child holds the lease (TTL: five minutes)...
        let other = try SessionTests().secondDevice(fixture)
        let login = try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport())
        await #expect(throws: AuthError.loggedInOnAnotherDevice) { try await other.signIn(with: login) }

        child.send(SIGTERM)
        let result = try await offPool { child.wait(timeout: .seconds(30)) }
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("RELEASED"))
        #expect(fixture.server.counters.releases == 1)
        #expect(fixture.server.lease(of: "alice") == nil)

        // ...and admitted right after the release, long before the lease would have lapsed.
        let third = try SessionTests().secondDevice(fixture, name: "device-c")
        try await third.signIn(with: try await fixture.credentialsStrategy().relogin(transport: URLSessionTransport()))
        #expect(fixture.server.lease(of: "alice")?.device == "device-c")
    }

    @Test func aHungServerCannotHoldTheExit() async throws {
        let fixture = try await fixtureWithPassword()
        let releaseSeen = Event(), serverMayAnswer = Event()
        defer {
            serverMayAnswer.signal()
            fixture.server.stop()
        }
        fixture.server.releaseHook.withLock { $0 = { releaseSeen.signal(); await serverMayAnswer.wait() } }
        let child = try start(fixture, "serve", ["child-device"], environment: ["VAULT_AUTH_TEST_RELEASE_TIMEOUT_MS": "300"])
        #expect(try await offPool { child.waitForOutput(containing: "READY", timeout: .seconds(60)) })

        child.send(SIGTERM)
        #expect(await releaseSeen.wait(seconds: 30))
        // The release never gets an answer; the deadline lets the process exit anyway, on its own.
        let result = try await offPool { child.wait(timeout: .seconds(60)) }
        #expect(result.signal == nil, "the child had to be killed: \(result.stderr)")
        #expect(result.status == 2)
        #expect(result.stdout.contains("NOT RELEASED"))
    }
}
