import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// The example executable as a real process: graceful shutdown on SIGTERM and SIGINT,
/// and the debounced write as the protection against SIGKILL.
@Suite(.offCooperativePool) struct ProfileDemoProcessTests {
    struct DemoSnapshot: Decodable {
        var nickname: String
    }

    let key = VaultKey.random()
    let directory = TestPaths.temporaryDirectory("profiledemo")
    var vaultPath: String { "\(directory)/demo.vault" }

    func startDemo(debounceMilliseconds: Int) throws -> ChildProcess {
        let hex = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        return try ChildProcess(
            TestPaths.executable("profile-demo"),
            ["--vault", vaultPath, "--account", "alice", "--debounce-ms", "\(debounceMilliseconds)"],
            environment: ChildProcess.cleanEnvironment(["PROFILE_DEMO_KEY": hex]),
            standardInput: nil
        )
    }

    func storedNickname() throws -> String? {
        let vault = try Vault.open(at: vaultPath, key: key)
        defer { vault.close() }
        guard try vault.contains(service: "profile-demo.profile", account: "alice") else { return nil }
        return try vault.value(DemoSnapshot.self, service: "profile-demo.profile", account: "alice").nickname
    }

    @Test func sigtermWritesTheLastUpdateBeforeExiting() throws {
        // A debounce of ten minutes: only the graceful shutdown can write the change.
        let child = try startDemo(debounceMilliseconds: 600_000)
        #expect(child.waitForOutput(containing: "ready snapshot=none"))
        try child.write(Data("nickname Bob\n".utf8))
        #expect(child.waitForOutput(containing: "profile nickname=Bob"))
        child.send(SIGTERM)
        let result = child.wait()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.hasSuffix("stopped\n"))
        #expect(try storedNickname() == "Bob")

        // The next launch shows it at once; Ctrl-C (SIGINT) stops it just as gracefully.
        let again = try startDemo(debounceMilliseconds: 600_000)
        #expect(again.waitForOutput(containing: "ready snapshot=loaded nickname=Bob"))
        try again.write(Data("nickname Robert\n".utf8))
        #expect(again.waitForOutput(containing: "profile nickname=Robert"))
        again.send(SIGINT)
        let second = again.wait()
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(try storedNickname() == "Robert")
    }

    @Test func sigkillAfterTheDebounceWindowLosesNothing() throws {
        let child = try startDemo(debounceMilliseconds: 100)
        #expect(child.waitForOutput(containing: "ready snapshot=none"))
        try child.write(Data("nickname Carol\n".utf8))
        #expect(child.waitForOutput(containing: "profile nickname=Carol"))
        // Wait for the debounced write to reach the vault, with no persist command and no signal.
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while try storedNickname() != "Carol", ContinuousClock.now < deadline {
            usleep(10_000)
        }
        child.send(SIGKILL)
        let result = child.wait()
        #expect(result.signal == SIGKILL)
        #expect(!result.stdout.contains("stopped"))
        #expect(try storedNickname() == "Carol")
    }
}
