import Foundation
import Testing
import TestSupport
import TestTraits

/// The no-echo prompts, on a real pseudo-terminal made by util-linux `script(1)`
/// (skipped where it is not installed): the test types into it like a person would.
@Suite(.offCooperativePool, .enabled(if: FileManager.default.isExecutableFile(atPath: TerminalSession.script)))
struct TerminalTests {
    @Test func initAsksTwiceWithoutEchoingThePassphrase() throws {
        let cli = CLI()
        let session = try TerminalSession(["init"] + CLI.cheapKDF + ["--vault", cli.vaultPath])
        try session.answer("New passphrase", with: "typed-pass-1")
        try session.answer("Repeat the passphrase", with: "typed-pass-1")
        let result = session.finish()
        #expect(result.status == 0, "\(result.stdout)")
        #expect(!result.stdout.contains("typed-pass-1"))
        let opened = try cli.run(["list"], env: ["VAULT_PASSPHRASE": "typed-pass-1"])
        #expect(opened.status == 0)
    }

    @Test func initFailsWhenTheTwoPassphrasesDiffer() throws {
        let cli = CLI()
        let session = try TerminalSession(["init"] + CLI.cheapKDF + ["--vault", cli.vaultPath])
        try session.answer("New passphrase", with: "one")
        try session.answer("Repeat the passphrase", with: "two")
        let result = session.finish()
        #expect(result.status == 1)
        #expect(result.stdout.contains("vault: the two passphrases do not match"))
        #expect(!FileManager.default.fileExists(atPath: cli.vaultPath))
    }

    @Test func setPromptsForTheSecretAndGetPromptsForThePassphrase() throws {
        let cli = CLI()
        try cli.initVault()
        let set = try TerminalSession(["set", "svc", "acct", "--vault", cli.vaultPath], environment: ["VAULT_PASSPHRASE": "correct horse"])
        try set.answer("Secret for service 'svc', account 'acct'", with: "typed secret")
        try set.answer("Repeat the secret", with: "typed secret")
        let setResult = set.finish()
        #expect(setResult.status == 0, "\(setResult.stdout)")
        #expect(!setResult.stdout.contains("typed secret"))

        let get = try TerminalSession(["get", "svc", "acct", "--vault", cli.vaultPath])
        try get.answer("Passphrase for \(cli.vaultPath)", with: "correct horse")
        let getResult = get.finish()
        #expect(getResult.status == 0)
        #expect(!getResult.stdout.contains("correct horse"))
        #expect(getResult.stdout.hasSuffix("typed secret\r\n"))
    }

    /// Ctrl-D at the passphrase prompt names what was not given.
    @Test func endOfInputAtThePassphrasePromptSaysPassphrase() throws {
        let cli = CLI()
        try cli.initVault()
        let session = try TerminalSession(["get", "svc", "acct", "--vault", cli.vaultPath])
        #expect(session.child.waitForOutput(containing: "Passphrase for", timeout: .seconds(30)))
        try session.child.write(Data([0x04]))  // VEOF
        let result = session.finish()
        #expect(result.status == 1)
        #expect(result.stdout.contains("vault: no passphrase given: the terminal input ended"), "\(result.stdout)")
    }

    /// Ctrl-C at the prompt kills `vault` with SIGINT, and the terminal echoes again.
    @Test func interruptingThePromptRestoresEcho() throws {
        let cli = CLI()
        try cli.initVault()
        let vault = TerminalSession.quoted([CLI.executable, "get", "svc", "acct", "--vault", cli.vaultPath])
        // The shell survives the SIGINT (a trap, unlike an ignore, is not inherited) to report.
        let session = try TerminalSession(shell: """
            trap 'true' INT; \(vault); echo "STATUS=$?"; \
            if stty -a | tr ' ;' '\\n\\n' | grep -qx -- -echo; then echo ECHO-OFF; else echo ECHO-ON; fi
            """)
        #expect(session.child.waitForOutput(containing: "Passphrase for", timeout: .seconds(30)))
        try session.child.write(Data([0x03]))  // VINTR
        let result = session.finish()
        #expect(result.stdout.contains("STATUS=130"), "\(result.stdout)")
        #expect(result.stdout.contains("ECHO-ON"), "\(result.stdout)")
    }
}

/// `vault` running on the pseudo-terminal of `script -q -e -c COMMAND /dev/null`.
struct TerminalSession {
    static let script = "/usr/bin/script"
    let child: ChildProcess

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(shell: Self.quoted([CLI.executable] + arguments), environment: environment)
    }

    /// Runs a `sh -c` command line on the terminal.
    init(shell command: String, environment: [String: String] = [:]) throws {
        child = try ChildProcess(Self.script, ["-q", "-e", "-c", command, "/dev/null"],
                                 environment: ChildProcess.cleanEnvironment(environment), standardInput: nil)
    }

    static func quoted(_ words: [String]) -> String {
        words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    }

    /// Waits for `prompt` (echo is already off when it appears), then types `text` and Return.
    func answer(_ prompt: String, with text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let appeared = child.waitForOutput(containing: prompt, timeout: .seconds(30))
        #expect(appeared, "no prompt \(prompt): \(String(decoding: child.outputSoFar, as: UTF8.self))", sourceLocation: sourceLocation)
        let before = child.outputSoFar.count
        try child.write(Data((text + "\n").utf8))
        // The prompt line ends once the Return was read; wait for it before the next answer.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline && !child.outputSoFar.dropFirst(before).contains(UInt8(ascii: "\n")) {
            usleep(2_000)
        }
    }

    func finish() -> ProcessResult {
        let result = child.wait(timeout: .seconds(60))
        child.closeStandardInput()
        return result
    }
}
