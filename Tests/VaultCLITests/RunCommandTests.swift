import Foundation
import Testing
import TestSupport
import TestTraits
#if canImport(Glibc)
import Glibc
#endif

/// `vault run` with real child processes: what reaches the child, and what does not.
@Suite(.offCooperativePool) struct RunCommandTests {
    static let secret = "s3cr3t-run-value"

    /// `vault run` with `--vault` before the `--` (CLI.run would append it to the command).
    func run(_ cli: CLI, _ arguments: [String], stdin: Data = Data()) throws -> ProcessResult {
        try cli.run([arguments[0], "--vault", cli.vaultPath] + arguments.dropFirst(), stdin: stdin, vault: false)
    }

    func vaultWithSecret(_ label: String = #function) throws -> CLI {
        let cli = CLI(label)
        try cli.initVault()
        try cli.set("api.example.com", "alice", Self.secret)
        return cli
    }

    @Test func theSecretIsOnlyInTheChildsEnvironment() throws {
        let cli = try vaultWithSecret()
        // The child reports its variable, its own argv (from /proc) and whether vault's
        // passphrase reached it.
        let script = #"printf '%s\n' "$TOKEN" "${VAULT_PASSPHRASE-withheld}" "$VAULT_PATH"; tr '\0' ' ' < /proc/$$/cmdline"#
        let result = try cli.run(["run", "--env", "TOKEN=api.example.com/alice", "--", "/bin/sh", "-c", script],
                                 env: ["VAULT_PATH": cli.vaultPath], vault: false)
        #expect(result.status == 0, "\(result.stderr)")
        let parts = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(parts.count == 4)
        #expect(parts.first == Substring(Self.secret))
        #expect(parts.dropFirst().first == "withheld")
        #expect(parts.dropFirst(2).first == Substring(cli.vaultPath))
        // The child's argv is what followed '--', with no secret in it.
        let argv = String(parts.last ?? "")
        #expect(argv.hasPrefix("/bin/sh -c ") && !argv.contains(Self.secret))
        #expect(!result.stderr.contains(Self.secret))
    }

    @Test func theChildInheritsStandardInputAndOutput() throws {
        let cli = try vaultWithSecret()
        let result = try run(cli, ["run", "--env", "T=api.example.com/alice", "--", "/bin/sh", "-c", "tr a-z A-Z; echo err >&2"],
                             stdin: Data("piped through\n".utf8))
        #expect(result.status == 0)
        #expect(result.stdout == "PIPED THROUGH\n")
        #expect(result.stderr == "err\n")
    }

    @Test(arguments: [Int32(0), 3, 77, 255])
    func theChildsExitStatusIsReturned(status: Int32) throws {
        let cli = try vaultWithSecret()
        let result = try run(cli, ["run", "--env", "T=api.example.com/alice", "--", "/bin/sh", "-c", "exit \(status)"])
        #expect(result.status == status)
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [SIGTERM, SIGKILL, SIGSEGV])
    func aChildKilledBySignalNGives128PlusN(signal: Int32) throws {
        let cli = try vaultWithSecret()
        let result = try run(cli, ["run", "--", "/bin/sh", "-c", "kill -\(signal) $$"])
        #expect(result.status == 128 + signal)
        #expect(result.signal == nil, "vault itself exits normally")
    }

    @Test(arguments: [(SIGTERM, "TERM"), (SIGINT, "INT"), (SIGHUP, "HUP"), (SIGUSR1, "USR1")])
    func signalsSentToVaultReachTheChild(signal: Int32, name: String) throws {
        let cli = try vaultWithSecret()
        // The loop ends by itself (after about 20 s) so that a regression fails instead of
        // leaving a process that holds the test's pipes open.
        let script = "trap 'echo got-\(name); exit 9' \(name); echo ready; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"
        let environment = ChildProcess.cleanEnvironment(cli.environment)
        let child = try ChildProcess(CLI.executable, ["run", "--vault", cli.vaultPath, "--env", "T=api.example.com/alice", "--", "/bin/sh", "-c", script],
                                     environment: environment)
        #expect(child.waitForOutput(containing: "ready"))
        child.send(signal)
        let result = child.wait(timeout: .seconds(60))
        #expect(result.stdout == "ready\ngot-\(name)\n")
        #expect(result.status == 9, "\(result.stderr)")
    }

    @Test func aMissingItemStopsEverythingBeforeTheChildStarts() throws {
        let cli = try vaultWithSecret()
        let marker = cli.directory + "/started"
        let result = try run(cli, ["run", "--env", "A=api.example.com/alice", "--env", "B=api.example.com/nobody", "--", "/usr/bin/touch", marker])
        #expect(result.status == 44)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("'nobody'"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func anEnvFileMixesReferencesAndPlainValuesAndEnvWins() throws {
        let cli = try vaultWithSecret()
        try cli.set("db/internal", "app%1", "db-pass")
        let file = cli.directory + "/app.env"
        try """
            # references are resolved, everything else is passed as it is
            export TOKEN=vault://api.example.com/alice
            DB='vault://db%2Finternal/app%251'
            MODE="plain value"
            OVERRIDDEN=vault://no/such-item

            """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run(cli, ["run", "--env-file", file, "--env", "OVERRIDDEN=db%2Finternal/app%251", "--",
                                  "/bin/sh", "-c", #"printf '%s|%s|%s|%s' "$TOKEN" "$DB" "$MODE" "$OVERRIDDEN""#])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(Self.secret)|db-pass|plain value|db-pass")
    }

    @Test(arguments: [
        ["run", "--", ],
        ["run", "--env", "NOEQUALS", "--", "true"],
        ["run", "--env", "1BAD=svc/acct", "--", "true"],
        ["run", "--env", "T=no-slash", "--", "true"],
        ["run", "--env", "T=svc/a%zz", "--", "true"],
    ])
    func badCommandLinesAreUsageErrors(arguments: [String]) throws {
        let cli = try vaultWithSecret()
        let result = try run(cli, arguments)
        #expect(result.status == 2)
        #expect(result.isOneErrorLine, "\(result.stderr)")
    }

    @Test func aBadEnvFileLineIsReportedWithItsNumber() throws {
        let cli = try vaultWithSecret()
        let file = cli.directory + "/bad.env"
        try "A=1\nthis is not an assignment\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run(cli, ["run", "--env-file", file, "--", "true"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("bad.env:2:"), "\(result.stderr)")
    }

    @Test func aCommandThatCannotBeFoundGives127() throws {
        let cli = try vaultWithSecret()
        let result = try run(cli, ["run", "--env", "T=api.example.com/alice", "--", "no-such-command-\(UUID().uuidString)"])
        #expect(result.status == 127)
        #expect(result.isOneErrorLine)
        #expect(!result.stderr.contains(Self.secret))
    }

    @Test func aSecretWithANULByteCannotBecomeAVariable() throws {
        let cli = try vaultWithSecret()
        try cli.run(["set", "bin", "blob"], stdin: Data([0x61, 0x00, 0x62]))
        let marker = cli.directory + "/started"
        let result = try run(cli, ["run", "--env", "B=bin/blob", "--", "/usr/bin/touch", marker])
        #expect(result.status == 1)
        #expect(result.stderr.contains("NUL"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }
}

/// `vault read vault://SERVICE/ACCOUNT` and the help texts.
@Suite(.offCooperativePool) struct ReadCommandTests {
    @Test func readIsGetSpelledAsAURI() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("api.example.com", "alice", "tok")
        #expect(try cli.run("read", "vault://api.example.com/alice").stdout == "tok\n")
        let json = try cli.run("read", "vault://api.example.com/alice", "--json")
        #expect(json.stdout.contains("\"secret\":\"tok\""))
        let missing = try cli.run("read", "vault://api.example.com/bob")
        #expect(missing.status == 44)
    }

    @Test func percentEscapesNameSlashesAndPercentSigns() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("git:https://example.com/org/repo.git", "50%/50", "x")
        let result = try cli.run("read", "vault://git:https:%2F%2Fexample.com%2Forg%2Frepo.git/50%25%2F50")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "x\n")
        // An empty account is allowed: the slash is still needed.
        try cli.set("svc", "", "empty-account")
        #expect(try cli.run("read", "vault://svc/").stdout == "empty-account\n")
    }

    @Test(arguments: ["api.example.com/alice", "vault://no-slash", "vault:///alice", "vault://svc/%2", "vault://svc/%ff"])
    func malformedURIsAreUsageErrors(uri: String) throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run(["read", uri])
        #expect(result.status == 2)
        #expect(result.isOneErrorLine, "\(result.stderr)")
    }

    /// A secret in an argument is visible to every user (`ps`, /proc/PID/cmdline): no help
    /// text may show one passed as `$(vault ...)`.
    @Test func noHelpExamplePutsASecretInAnArgument() throws {
        let cli = CLI()
        for command in ["", "init", "set", "add", "update", "get", "delete", "list", "verify", "passwd", "rekey",
                        "run", "read", "generate", "git-credential", "docker-credential"] {
            let help = try cli.run((command.isEmpty ? [] : [command]) + ["--help"], vault: false)
            #expect(help.status == 0, "\(command)")
            #expect(!help.stdout.contains("$(vault"), "\(command)")
            #expect(!help.stdout.contains("`vault get"), "\(command)")
            if ["run", "read", "generate"].contains(command) { #expect(help.stdout.contains("EXAMPLE"), "\(command)") }
        }
    }
}

/// `vault run` on a real terminal (util-linux `script(1)`), where Ctrl-C goes to the whole
/// foreground process group: `vault` must outlive it and report what the command did.
@Suite(.offCooperativePool, .enabled(if: FileManager.default.isExecutableFile(atPath: TerminalSession.script)))
struct RunCommandTerminalTests {
    @Test func ctrlCReachesTheCommandAndVaultReportsItsStatus() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "x")
        let run = TerminalSession.quoted([CLI.executable, "run", "--vault", cli.vaultPath, "--env", "T=svc/acct", "--",
                                          "/bin/sh", "-c", "trap 'echo GOT-INT; exit 7' INT; echo READY; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done"])
        let session = try TerminalSession(shell: "trap 'true' INT; \(run); echo \"STATUS=$?\"", environment: ["VAULT_PASSPHRASE": "correct horse"])
        #expect(session.child.waitForOutput(containing: "READY", timeout: .seconds(30)))
        try session.child.write(Data([0x03]))  // VINTR
        let result = session.finish()
        #expect(result.stdout.contains("GOT-INT"), "\(result.stdout)")
        #expect(result.stdout.contains("STATUS=7"), "\(result.stdout)")
    }
}
