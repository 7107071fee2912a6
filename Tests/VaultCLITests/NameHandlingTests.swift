import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Service and account names on the command line: UTF-8 only (never repaired), listed in
/// byte order, readable from a file or standard input instead of argv, and escaped when
/// printed, so a name cannot act on the user's terminal.
@Suite(.offCooperativePool) struct NameHandlingTests {
    /// Runs `vault` through the shell, so an argument can hold bytes a Swift `String`
    /// cannot (`printf` makes them).
    static func shell(_ cli: CLI, _ script: String) throws -> ProcessResult {
        var environment = ChildProcess.cleanEnvironment(cli.environment)
        environment["VAULT"] = CLI.executable
        environment["VAULT_PATH"] = cli.vaultPath
        return try ChildProcess.run("/bin/sh", ["-c", script], environment: environment)
    }

    /// Repaired into UTF-8, two Latin-1 names would both become `caf\u{FFFD}`, and one
    /// would overwrite the other.
    @Test func namesThatAreNotUTF8AreRefusedNotRepaired() throws {
        let cli = CLI()
        try cli.initVault()
        let first = try Self.shell(cli, #"printf 'A\n' | "$VAULT" set "$(printf 'caf\351')" bob"#)
        #expect(first.status == 2)
        #expect(first.stderr == "vault: argument 2 is not valid UTF-8; names must be UTF-8 text\n")
        let second = try Self.shell(cli, #"printf 'B\n' | "$VAULT" set "$(printf 'caf\340')" bob"#)
        #expect(second.status == 2)
        #expect(try cli.run("list").stdout == "")

        // The same from a names file.
        let names = cli.directory + "/names"
        try writePrivateFile(names, Data([0x63, 0x61, 0x66, 0xE9, 0x0A, 0x62, 0x6F, 0x62, 0x0A]))
        let fromFile = try cli.run(["set", "--names-from", names], stdin: Data("A\n".utf8))
        #expect(fromFile.status == 2)
        #expect(fromFile.stderr.contains("is not valid UTF-8"))
        #expect(try cli.run("list").stdout == "")
    }

    /// docs/CLI.md promises bytewise order: Swift's `String` order would tie an NFC and an
    /// NFD spelling, which are two items, and then sort them by account.
    @Test func listIsSortedByBytes() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("caf\u{E9}", "a", "nfc")       // 63 61 66 c3 a9
        try cli.set("cafe\u{301}", "b", "nfd")     // 63 61 66 65 cc 81: first by bytes
        #expect(try cli.run("list").stdout == "cafe\u{301}\tb\ncaf\u{E9}\ta\n")
    }

    @Test func namesCanComeFromAFileOrStandardInput() throws {
        let cli = CLI()
        try cli.initVault()
        let names = cli.directory + "/names"
        try writePrivateFile(names, Data("api.example.com\nalice\n".utf8))
        #expect(try cli.run(["set", "--names-from", names], stdin: Data("s3cr3t\n".utf8)).status == 0)
        #expect(try cli.run("get", "api.example.com", "alice").stdout == "s3cr3t\n")
        #expect(try cli.run(["get", "--names-from", "-"], stdin: Data("api.example.com\nalice".utf8)).stdout == "s3cr3t\n")
        // A secret on standard input leaves no room for names there.
        let clash = try cli.run(["set", "--names-from", "-"], stdin: Data("api.example.com\nalice\n".utf8))
        #expect(clash.status == 2)
        #expect(clash.isOneErrorLine)
        let both = try cli.run(["get", "api.example.com", "alice", "--names-from", names])
        #expect(both.status == 2)
        #expect(try cli.run(["delete", "--names-from", names]).status == 0)
        #expect(try cli.run("get", "api.example.com", "alice").status == 44)
    }

    @Test func terminalControlsInNamesAndPathsAreEscaped() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("csi\u{9B}31m", "osc\u{9D}0;x\u{7}", "1")
        try cli.set("rtl\u{202E}gpj.exe", "lrm\u{200E}", "2")
        let list = try cli.run("list").stdout
        #expect(list == "csi\\u{009b}31m\tosc\\u{009d}0;x\\x07\nrtl\\u{202e}gpj.exe\tlrm\\u{200e}\n")
        let missing = try cli.run("get", "rtl\u{202E}x", "a\u{1B}[2J")
        #expect(missing.stderr == "vault: item not found: service 'rtl\\u{202e}x', account 'a\\x1b[2J'\n")
        // JSON output too: \u escapes a JSON reader turns back into the same names.
        let json = try cli.run("list", "--json")
        #expect(json.stdout.contains(#""service":"csi\u009b31m","account":"osc\u009d0;x\u0007""#), "\(json.stdout)")
        #expect(json.stdout.contains(#""service":"rtl\u202egpj.exe","account":"lrm\u200e""#), "\(json.stdout)")
        let get = try cli.run("get", "--json", "rtl\u{202E}gpj.exe", "lrm\u{200E}")
        #expect(get.stdout.hasPrefix(#"{"service":"rtl\u202egpj.exe","account":"lrm\u200e""#), "\(get.stdout)")
        for output in [json.standardOutput, get.standardOutput] {
            #expect(!output.contains(0x07) && output.range(of: Data([0xc2, 0x9b])) == nil && output.range(of: Data([0xe2, 0x80, 0xae])) == nil)
        }

        let odd = cli.directory + "/\u{1B}]0;title\u{7}\u{9B}.vault"
        let result = try cli.run(["get", "s", "a", "--vault", odd], vault: false)
        #expect(result.status == 1)
        #expect(result.stderr == "vault: no vault at \(cli.directory)/\\x1b]0;title\\x07\\u{009b}.vault (create one with 'vault init')\n")
    }
}
