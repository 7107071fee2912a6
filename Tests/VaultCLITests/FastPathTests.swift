import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault get|set SERVICE ACCOUNT` skip argument-parser (`FastPath`); `vault get --
/// SERVICE ACCOUNT` means the same to the parser but is left to it. Both must give the
/// same output, errors and exit status in every situation.
@Suite(.offCooperativePool) struct FastPathTests {
    @Test func plainGetAndSetBehaveExactlyAsTheParsedCommands() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("api.example.com", "alice", "s3cr3t")
        #expect(try cli.run(["set", "binary", "acc"], stdin: Data([0xff, 0x00, 0x0a, 0x0a])).status == 0)
        let keyDirectory = cli.directory
        try writePrivateFile(keyDirectory + "/short.key", Data(repeating: 1, count: 31))
        try writePrivateFile(keyDirectory + "/empty-first-line", Data("\nrest\n".utf8))
        let noAgent = ["VAULT_AGENT_SOCKET": cli.directory + "/none.sock"]

        let situations: [(label: String, env: [String: String], unset: [String], vault: String?)] = [
            ("the vault", [:], [], nil),
            ("no vault file", [:], [], cli.directory + "/missing.vault"),
            ("wrong passphrase", ["VAULT_PASSPHRASE": "wrong"], [], nil),
            ("no passphrase", [:], ["VAULT_PASSPHRASE"], nil),
            ("missing key file", ["VAULT_KEY_FILE": keyDirectory + "/missing.key"], [], nil),
            ("short key file", ["VAULT_KEY_FILE": keyDirectory + "/short.key"], [], nil),
            ("empty passphrase line", ["VAULT_PASSPHRASE_FILE": keyDirectory + "/empty-first-line"], [], nil),
            ("a directory as the vault", [:], [], cli.directory),
        ]
        for situation in situations {
            let vault = ["--vault", situation.vault ?? cli.vaultPath]
            for names in [["api.example.com", "alice"], ["binary", "acc"], ["api.example.com", "nobody"]] {
                let fast = try cli.run(["get"] + names + vault, env: noAgent.merging(situation.env) { $1 }, unset: situation.unset, vault: false)
                let parsed = try cli.run(["get"] + vault + ["--"] + names, env: noAgent.merging(situation.env) { $1 }, unset: situation.unset, vault: false)
                #expect(fast.status == parsed.status, "\(situation.label) \(names): \(fast.stderr) / \(parsed.stderr)")
                #expect(fast.standardOutput == parsed.standardOutput, "\(situation.label) \(names)")
                #expect(fast.stderr == parsed.stderr, "\(situation.label) \(names)")
            }
            // The same write twice, once each way, then read back with the parser.
            for (index, arguments) in [["set", "new", "item"] + vault, ["set"] + vault + ["--", "new", "item"]].enumerated() {
                let secret = Data("written \(situation.label)\n".utf8)
                let result = try cli.run(arguments, stdin: secret, env: noAgent.merging(situation.env) { $1 }, unset: situation.unset, vault: false)
                let readBack = try cli.run(["get", "--vault", cli.vaultPath, "--", "new", "item"], env: noAgent, vault: false)
                if index == 0 {
                    let parsed = try cli.run(["set"] + vault + ["--", "new", "item"], stdin: secret, env: noAgent.merging(situation.env) { $1 }, unset: situation.unset, vault: false)
                    #expect(result.status == parsed.status && result.stderr == parsed.stderr && result.standardOutput == parsed.standardOutput, "\(situation.label): \(result.stderr) / \(parsed.stderr)")
                }
                if situation.label == "the vault" { #expect(readBack.stdout == "written the vault\n") }
            }
        }
    }

    /// Only the exact forms are taken: anything else is the parser's, including usage errors.
    @Test func otherFormsAreLeftToTheParser() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "secret")
        for arguments in [["get", "s"], ["get", "s", "a", "b"], ["get", "", "a"], ["get", "s", "a", "--vault"]] {
            let result = try cli.run(arguments, vault: false)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.isOneErrorLine, "\(arguments)")
        }
        // "help" is an ordinary name to `vault get`; the fast path leaves it to the parser anyway.
        #expect(try cli.run(["get", "help", "a"]).status == 44)
        #expect(try cli.run(["get", "s", "a", "--vault=\(cli.vaultPath)"], vault: false).stdout == "secret\n")
        #expect(try cli.run(["get", "--vault", cli.vaultPath, "s", "a"], vault: false).stdout == "secret\n")
    }
}
