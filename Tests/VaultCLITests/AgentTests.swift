import Foundation
import Testing
import TestSupport
import TestTraits
#if canImport(Glibc)
import Glibc
#endif

/// `vault agent`, `vault unlock` and `vault lock` with real processes and real sockets.
@Suite(.offCooperativePool) struct AgentTests {
    /// The same commands on two copies of one vault, one opened by each command and one
    /// held by the agent, give the same standard output, standard error and status.
    @Test func everyItemCommandGivesTheSameResultsThroughTheAgent() throws {
        let direct = CLI()
        try direct.initVault()
        try direct.set("api.example.com", "alice", "s3cr3t")
        try direct.set("api.example.com", "bob", "hunter2")
        try direct.set("tab\tservice", "new\nline", "x")
        #expect(try direct.run(["set", "svc", "acc", "--label", "Label", "--generic", "data"], stdin: Data("v\n".utf8)).status == 0)
        #expect(try direct.run(["set", "binary", "acc"], stdin: Data([0xff, 0xfe, 0x00])).status == 0)
        let copy = CLI()
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: direct.vaultPath + suffix) {
            try FileManager.default.copyItem(atPath: direct.vaultPath + suffix, toPath: copy.vaultPath + suffix)
        }
        let agent = try TestAgent(socketDirectory: copy.directory)
        defer { agent.stop() }
        try copy.unlock(in: agent)
        let noAgent = ["VAULT_AGENT_SOCKET": direct.directory + "/no-agent.sock"]

        let commands: [(arguments: [String], stdin: String)] = [
            (["get", "api.example.com", "alice"], ""),
            (["get", "api.example.com", "alice", "--json"], ""),
            (["get", "svc", "acc", "--generic"], ""),
            (["get", "svc", "acc", "--json"], ""),
            (["get", "binary", "acc"], ""),
            (["get", "binary", "acc", "--json"], ""),
            (["get", "missing", "x"], ""),
            (["get", "tab\tservice", "new\nline"], ""),
            (["get", "api.example.com"], ""),
            (["get", "help", "x"], ""),
            (["get", "api.example.com", "alice", "extra"], ""),
            (["get", "--", "api.example.com", "alice"], ""),
            (["list"], ""),
            (["list", "--json"], ""),
            (["list", "--service", "api.example.com"], ""),
            (["verify"], ""),
            (["set", "api.example.com", "alice"], "changed\n"),
            (["set", "api.example.com", "carol"], ""),
            (["set", "-x", "carol"], "x\n"),
            (["add", "api.example.com", "alice"], "x\n"),
            (["update", "nobody", "here"], "x\n"),
            (["add", "new", "item", "--label", "L"], "added\n"),
            (["update", "api.example.com", "bob"], "updated\n"),
            (["delete", "api.example.com", "bob"], ""),
            (["delete", "missing", "x"], ""),
            (["delete", "tab\tservice", "--all"], ""),
            (["list"], ""),
            (["get", "api.example.com", "alice"], ""),
            (["get", "new", "item"], ""),
            (["get", "api.example.com", "bob"], ""),
            (["verify"], ""),
        ]
        for (arguments, stdin) in commands {
            let expected = try direct.run(arguments, stdin: Data(stdin.utf8), env: noAgent)
            let actual = try copy.runThroughAgent(arguments, agent: agent, stdin: Data(stdin.utf8))
            #expect(actual.status == expected.status, "\(arguments): \(actual.stderr)")
            #expect(actual.standardOutput == expected.standardOutput, "\(arguments)")
            #expect(
                actual.stderr.replacingOccurrences(of: copy.vaultPath, with: "VAULT") == expected.stderr.replacingOccurrences(of: direct.vaultPath, with: "VAULT"),
                "\(arguments)"
            )
        }
        // The commands ran in the agent: the passphrase was never given to them.
        #expect(try copy.runThroughAgent(["get", "new", "item"], agent: agent).stdout == "added\n")
    }

    /// A command for a vault the agent does not hold behaves exactly as without an agent.
    @Test func aVaultTheAgentDoesNotHoldIsOpenedAsBefore() throws {
        let held = CLI(), other = CLI()
        try held.initVault()
        try other.initVault()
        try other.set("s", "a", "other secret")
        let agent = try TestAgent(socketDirectory: held.directory)
        defer { agent.stop() }
        try held.unlock(in: agent)
        let withoutPassphrase = try other.runThroughAgent(["get", "s", "a"], agent: agent)
        #expect(withoutPassphrase.status == 1)
        #expect(withoutPassphrase.stderr.contains("no passphrase available"))
        #expect(try other.run(["get", "s", "a"], env: agent.environment).stdout == "other secret\n")
    }

    /// `vault lock` and the idle timeout let go of the vault, which wipes its keys; the
    /// agent's status shows it, and commands need the passphrase again.
    @Test func lockAndTheIdleTimeoutLetGoOfTheVault() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            #expect(try agent.status(cli).stdout.contains("unlocked: \(cli.vaultPath) (locks after 900 s idle"))
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            #expect(try cli.run(["lock"], env: agent.environment).status == 0)
            #expect(try agent.status(cli).stdout.hasSuffix("no vault unlocked\n"))
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stderr.contains("no passphrase available"))

            // Nothing is asserted about the second before the timeout: on a loaded machine
            // it may pass before the next command starts.
            try cli.unlock(in: agent, ["--idle-timeout", "1"])
            #expect(try eventually { try agent.status(cli).stdout.hasSuffix("no vault unlocked\n") })
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stderr.contains("no passphrase available"))

            let log = agent.stop()
            #expect(log.status == 0)
            #expect(log.stderr.contains("locked \(cli.vaultPath): locked on request"))
            #expect(log.stderr.contains("locked \(cli.vaultPath): idle timeout"))
            #expect(!log.stderr.contains("secret") && !log.stderr.contains("correct horse"))
            #if DEBUG
            // Each time, the master key, its subkeys and the key-encryption key were wiped.
            let wipes = log.stderr.split(separator: "\n").filter { $0.contains("vault agent: locked \(cli.vaultPath)") }
            #expect(wipes.count == 2)
            for line in wipes {
                let wiped = line.firstMatch(of: /(\d+) secure buffers wiped, (\d+) not zeroed/)
                #expect((wiped.flatMap { Int($0.1) } ?? 0) >= 3, "\(line)")
                #expect(wiped.map { $0.2 } == "0", "\(line)")
            }
            #endif
        }
    }

    /// As root, a process of another user (`nobody`) that reaches the socket is refused by
    /// the agent (SO_PEERCRED) and logged; the client refuses an agent of another user too.
    @Test(.enabled(if: Unprivileged.isAvailable, "needs root with setpriv"))
    func anotherUserIsRefused() throws {
        try CLI.withUnlockedVault(socketDirectory: Unprivileged.worldReadableDirectory()) { (cli, agent) throws in
            // A mistake that lets everyone reach the socket: the peer check still holds.
            chmod(agent.socketPath, 0o666)
            let intruder = try Unprivileged.run(CLI.executable, ["agent", "status"], environment: ChildProcess.cleanEnvironment(agent.environment))
            #expect(intruder.status == 1)
            #expect(intruder.stderr == "vault: refusing the agent socket: the agent runs as another user (uid 0)\n", "\(intruder.stderr)")
            #expect(!intruder.stdout.contains(cli.vaultPath))
            // Connections are admitted in order: once this one is answered, the other was refused.
            #expect(try agent.status(cli).stdout.contains("unlocked: \(cli.vaultPath)"))
            let log = agent.stop()
            #expect(log.stderr.contains("refused a connection from uid \(Unprivileged.userID)"), "\(log.stderr)")
        }
    }

    /// Malformed and hostile messages get a refusal and a closed connection; the agent
    /// carries on serving.
    @Test func theAgentSurvivesAThousandGarbageMessages() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            var random = SplitMix64(seed: 0x5EED_0015)
            for round in 0..<1000 {
                guard let connection = RawAgentConnection(agent.socketPath) else {
                    Issue.record("the agent stopped accepting connections at round \(round)")
                    return
                }
                defer { connection.close() }
                let body = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                switch round % 5 {
                case 0: connection.send(RawAgentConnection.frame(body))  // random body
                case 1: connection.send(RawAgentConnection.frame([3, UInt8.random(in: 0...0x20, using: &random)] + body))  // random request (protocol 3)
                case 2: connection.send([0xff, 0xff, 0xff, 0xff] + body)  // 4 GiB announced
                case 3: connection.send(Array(RawAgentConnection.frame(body + [1, 0x12]).prefix(body.count / 2)))  // cut short
                default: connection.send(RawAgentConnection.frame([4, 0x01] + body))  // a future version
                }
                let answer = connection.readToEnd()
                if answer.count >= 6 { #expect(answer[5] == 9 || answer[5] == 7 || answer[5] == 8, "round \(round): response tag \(answer[5])") }
            }
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            // SIGTERM: the vault is let go of (its keys wiped) before the agent exits 0.
            let stopped = agent.stop()
            #expect(stopped.status == 0)
            #expect(stopped.stderr.contains("locked \(cli.vaultPath): signal \(SIGTERM)"), "\(stopped.stderr)")
            #expect(stopped.stderr.contains("stopped (signal \(SIGTERM)); 1 vault locked"))
        }
    }

    /// Clients that die mid-request (half a message sent, or killed at any moment) cost
    /// the agent nothing.
    @Test func theAgentSurvivesFiftyClientsKilledMidRequest() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            // Half of a large write request, then the connection ends.
            for _ in 0..<50 {
                guard let connection = RawAgentConnection(agent.socketPath) else { Issue.record("no connection"); return }
                connection.send(RawAgentConnection.frame([UInt8](repeating: 7, count: 1 << 20)).prefix(300_000).map { $0 })
                connection.close()
            }
            // Real clients killed while their request is under way: stdin stays open, so each
            // `set` has asked the agent whether the item exists and waits for the secret.
            var environment = ChildProcess.cleanEnvironment(agent.environment)
            environment["VAULT_PATH"] = cli.vaultPath
            let clients = try (0..<50).map { index in
                try ChildProcess(CLI.executable, index % 2 == 0 ? ["set", "s", "k\(index)"] : ["list"], environment: environment, standardInput: nil)
            }
            for client in clients {
                client.send(SIGKILL)
                _ = client.wait()
            }
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            #expect(try cli.runThroughAgent(["verify"], agent: agent).stdout == "ok: 1 item\n")
            #expect(agent.stop().status == 0)
        }
    }

    /// Every write the agent acknowledged is in the file, even when the agent dies
    /// without any chance to clean up.
    @Test func killingTheAgentLosesNoAcknowledgedWrite() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            for index in 0..<20 {
                let result = try cli.runThroughAgent(["set", "svc", "acct\(index)"], agent: agent, stdin: Data("secret \(index)\n".utf8))
                #expect(result.status == 0, "\(result.stderr)")
            }
            agent.process.send(SIGKILL)
            #expect(agent.stop().signal == SIGKILL)
            for index in 0..<20 {
                #expect(try cli.run("get", "svc", "acct\(index)").stdout == "secret \(index)\n")
            }
            #expect(try cli.run("verify").stdout == "ok: 21 items\n")
        }
    }

    /// A re-key by another process is followed; a new passphrase, or a file replaced by
    /// another one, makes the agent let go (the next command needs the passphrase).
    @Test func theAgentFollowsARekeyAndLetsGoOfAChangedOrReplacedVault() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            #expect(try cli.run("rekey").status == 0)
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")

            let passwd = try cli.run(["passwd", "--rewrap-only"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "new one"])
            #expect(passwd.status == 0, "\(passwd.stderr)")
            // Only re-wrapped: the master key the agent holds is still the vault's (documented).
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            #expect(try cli.run(["rekey"], env: ["VAULT_PASSPHRASE": "new one"]).status == 0)
            let afterPasswd = try cli.runThroughAgent(["get", "s", "a"], agent: agent)
            #expect(afterPasswd.stderr.contains("no passphrase available"), "\(afterPasswd.stderr)")
            #expect(try agent.status(cli).stdout.hasSuffix("no vault unlocked\n"))

            try cli.unlock(in: agent, [], env: ["VAULT_PASSPHRASE": "new one"])
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            let replacement = cli.directory + "/replacement.vault"
            try FileManager.default.copyItem(atPath: cli.vaultPath, toPath: replacement)
            #expect(rename(replacement, cli.vaultPath) == 0)
            #expect(try agent.status(cli).stdout.hasSuffix("no vault unlocked\n"))
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stderr.contains("no passphrase available"))

            let log = agent.stop()
            #expect(log.stderr.contains("its passphrase or key was changed by another process"))
            #expect(log.stderr.contains("the file was replaced"))
        }
    }

    /// `vault unlock` starts the agent in the background when none runs; `vault agent
    /// stop` wipes and ends it and removes the socket; SIGTERM does the same.
    @Test func unlockStartsTheAgentAndStopEndsIt() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        let environment = ["VAULT_AGENT_SOCKET": cli.directory + "/agent.sock"]
        var started: pid_t?
        defer {
            // Whatever failed above, no agent outlives the test.
            _ = try? cli.run(["agent", "stop"], env: environment, vault: false)
            if let started { kill(started, SIGKILL) }
        }
        #expect(try cli.run(["agent", "status"], env: environment, vault: false).status == 3)
        let unlocked = try cli.run(["unlock", "--key-file", cli.directory + "/missing.key"], env: environment)
        #expect(unlocked.stderr.hasPrefix("vault: cannot read the key file"))
        #expect(try cli.run(["unlock"], env: environment).status == 0)
        let status = try cli.run(["agent", "status"], env: environment, vault: false)
        #expect(status.status == 0)
        if let range = status.stdout.range(of: #"pid (\d+)"#, options: .regularExpression) {
            started = pid_t(status.stdout[range].dropFirst(4))
        }
        #expect(started != nil)
        // The passphrase `vault unlock` read from the environment did not go to the agent
        // (only root may read a non-dumpable process's environment).
        if let started, geteuid() == 0 {
            let environment = FileManager.default.contents(atPath: "/proc/\(started)/environ").map { String(decoding: $0, as: UTF8.self) }
            #expect(environment?.contains("VAULT_AGENT_SOCKET=") == true)
            #expect(environment?.contains("VAULT_PASSPHRASE") == false)
        }
        var info = stat()
        #expect(stat(cli.directory + "/agent.sock", &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try cli.run(["get", "s", "a"], env: environment, unset: ["VAULT_PASSPHRASE"]).stdout == "secret\n")
        #expect(try cli.run(["agent", "stop"], env: environment, vault: false).status == 0)
        #expect(access(cli.directory + "/agent.sock", F_OK) != 0)
        #expect(try cli.run(["agent", "status"], env: environment, vault: false).status == 3)
        #expect(try cli.run(["agent", "stop"], env: environment, vault: false).status == 0)
        // With no agent, locking is nothing to do, not an error.
        #expect(try cli.run(["lock"], env: environment).status == 0)
        #expect(try cli.run(["lock", "--all"], env: environment, vault: false).status == 0)
        let log = try String(contentsOfFile: cli.directory + "/agent.log", encoding: .utf8)
        #expect(log.contains("stopped (stopped by request); 1 vault locked"))
        if let started { #expect(eventually { hasExited(started) }) }
        started = nil
    }

    /// What a squatter of the `/tmp/vault-UID` fallback (no `XDG_RUNTIME_DIR`) makes: a
    /// socket directory of another user. `vault unlock` refuses it and says why, and
    /// starts no agent there (AGENT.md).
    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"))
    func aSocketDirectoryOfAnotherUserIsRefusedWithTheReason() throws {
        let cli = CLI()
        try cli.initVault()
        let squatted = cli.directory + "/vault-squatted"
        mkdir(squatted, 0o700)
        #expect(chown(squatted, Unprivileged.userID, Unprivileged.userID) == 0)
        let result = try cli.run(["unlock"], env: ["VAULT_AGENT_SOCKET": squatted + "/agent.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "vault: refusing the agent directory \(squatted): it belongs to another user (uid \(Unprivileged.userID))\n")
        #expect(access(squatted + "/agent.sock", F_OK) != 0)
    }

    /// `(vault unlock 7>&1) | cat` ends: were the background agent to inherit the shell's
    /// descriptor 7, the pipe's write end, it would hold it for its whole life and `cat`
    /// would never see the end of its input.
    @Test func theBackgroundAgentKeepsNoDescriptorOfItsCaller() throws {
        let cli = CLI()
        try cli.initVault()
        let environment = ["VAULT_AGENT_SOCKET": cli.directory + "/agent.sock"]
        defer { _ = try? cli.run(["agent", "stop"], env: environment, vault: false) }
        let pipe = try ChildProcess.closeOnExecPipe()
        let ends = [pipe.read, pipe.write]
        defer { close(ends[0]) }
        let unlock = try ChildProcess(CLI.executable, ["unlock", "--vault", cli.vaultPath],
                                      environment: ChildProcess.cleanEnvironment(cli.environment.merging(environment) { $1 }
                                          .merging(["XDG_STATE_HOME": cli.directory + "/state"]) { $1 }),
                                      inherited: [7: ends[1]])
        close(ends[1])
        let result = unlock.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["agent", "status"], env: environment, vault: false).status == 0)
        // `vault unlock` has ended and the agent runs: only a writer the agent kept could
        // keep the pipe open. Read without waiting: 0 is end of file, EAGAIN a writer left.
        #expect(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        var byte: UInt8 = 0
        let n = read(ends[0], &byte, 1)
        #expect(n == 0, "the agent still holds the caller's descriptor 7 (read gave \(n), errno \(errno))")
    }

    /// The socket's directory must be the user's own and closed to others.
    @Test func anAgentDirectoryOthersCanWriteIsRefused() throws {
        let cli = CLI()
        try cli.initVault()
        let shared = cli.directory + "/shared"
        mkdir(shared, 0o777)
        chmod(shared, 0o777)
        let result = try cli.run(["unlock"], env: ["VAULT_AGENT_SOCKET": shared + "/agent.sock"])
        #expect(result.status == 1)
        #expect(result.stderr == "vault: refusing the agent directory \(shared): permissions 777 let others in (chmod 700)\n")
        #expect(access(shared + "/agent.sock", F_OK) != 0)
    }
}

/// Whether `pid` has ended: gone, or a zombie its new parent has not reaped yet (the
/// agent outlives the `vault unlock` that started it).
private func hasExited(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    guard let end = stat.lastIndex(of: ")") else { return false }
    return stat[end...].dropFirst(2).first == "Z"
}
