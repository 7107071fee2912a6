import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault export` and `vault import` through the real binary: files, pipes, exit
/// statuses, and what reaches standard error.
@Suite(.offCooperativePool) struct ImportExportCommandTests {
    static let exportArguments = ["export", "--format", "json", "--plaintext"]

    /// Items with every kind of attribute and secret the export must carry.
    static func fill(_ cli: CLI) throws {
        try cli.initVault()
        #expect(try cli.run(["set", "api.example.com", "alice", "--label", "Example \"API\"", "--generic", "client-id=42"], stdin: Data("line one\nline two\n\n".utf8)).status == 0)
        #expect(try cli.run(["set", "Grüße 🔑", "tab\there"], stdin: Data("秘密 пароль\n".utf8)).status == 0)
        #expect(try cli.run(["set", "binary", ""], stdin: Data([0, 255, 10, 0xC3, 0x28]) + Data("\n".utf8)).status == 0)
        #expect(try cli.run(["set", "empty", "secret"], stdin: Data("\n".utf8)).status == 0)
    }

    /// Each item's attributes (no timestamps) and exact secret bytes, read back through the CLI.
    static func snapshot(_ cli: CLI) throws -> [String] {
        let list = try cli.run("list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: list.standardOutput) as? [[String: Any]])
        return try items.map { item in
            let service = try #require(item["service"] as? String), account = try #require(item["account"] as? String)
            let secret = try cli.run(["get", service, account])
            #expect(secret.status == 0)
            let attributes = ["service", "account", "label", "generic", "genericBase64"].map { "\($0)=\(item[$0] ?? "absent")" }
            return attributes.joined(separator: " ") + " secret=" + secret.standardOutput.base64EncodedString()
        }
    }

    @Test func exportToAFileThenImportIntoANewVaultGivesIdenticalItems() throws {
        let source = CLI()
        try Self.fill(source)
        let file = source.directory + "/export.json"
        let export = try source.run(Self.exportArguments + ["--output", file])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.isEmpty && export.stderr.isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let target = CLI(passphrase: "another passphrase")
        try target.initVault()
        let imported = try target.run("import", "--format", "json", file)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported 4 items (0 replaced), skipped 0 entries without a password or not a login\n")
        let expected = try Self.snapshot(source)
        #expect(expected.count == 4)
        #expect(try Self.snapshot(target) == expected)
    }

    @Test func exportThroughAPipeIntoImportFromStandardInput() throws {
        let source = CLI()
        try Self.fill(source)
        let export = try source.run(Self.exportArguments)
        #expect(export.status == 0)
        let target = CLI()
        try target.initVault()
        let imported = try target.run(["import", "--format", "json", "-"], stdin: export.standardOutput)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Self.snapshot(target) == Self.snapshot(source))
    }

    @Test func exportWithoutPlaintextWritesNothing() throws {
        let cli = CLI()
        try Self.fill(cli)
        let file = cli.directory + "/export.json"
        let result = try cli.run("export", "--format", "json", "--output", file)
        #expect(result.status == 2)
        #expect(result.isOneErrorLine && result.stderr.contains("--plaintext"))
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func exportNeverOverwritesAFileOrFollowsASymbolicLink() throws {
        let cli = CLI()
        try Self.fill(cli)
        let existing = cli.directory + "/existing.json"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        let overwrite = try cli.run(Self.exportArguments + ["--output", existing])
        #expect(overwrite.status == 1)
        #expect(overwrite.stderr == "vault: cannot write \(existing): file exists\n")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")

        let link = cli.directory + "/link.json", target = cli.directory + "/target.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let followed = try cli.run(Self.exportArguments + ["--output", link])
        #expect(followed.status == 1)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func aFailedExportLeavesNoFile() throws {
        let cli = CLI()
        try Self.fill(cli)
        let file = cli.directory + "/export.json"
        let result = try cli.run(Self.exportArguments + ["--output", file], env: ["VAULT_PASSPHRASE": "wrong"])
        #expect(result.status == 1 && result.stderr == "vault: wrong passphrase or key\n")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func importIsAllOrNothingAndRefusesDuplicatesUnlessOverwrite() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("github.com", "alice", "old-secret")
        let fixture = FormatFixtures.path("keepassxc.csv")

        let refused = try cli.run("import", "--format", "keepassxc", fixture)
        #expect(refused.status == 45)
        #expect(refused.stderr == "vault: item already exists: service 'github.com', account 'alice'\n")
        // Nothing of the file was written: the other entry is absent, the old secret kept.
        #expect(try cli.run("get", "db server", "root").status == 44)
        #expect(try cli.run("get", "github.com", "alice").stdout == "old-secret\n")

        let replaced = try cli.run("import", "--format", "keepassxc", "--overwrite", fixture)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout == "imported 2 items (1 replaced), skipped 1 entry without a password or not a login\n")
        #expect(try cli.run("get", "github.com", "alice").stdout == "gh-secret, with comma\n")
        #expect(try cli.run("get", "db server", "root").stdout == "quote \" inside\n")
    }

    /// The vault refuses the second item (a name over 64 KiB) inside the transaction:
    /// the first, already written in it, is rolled back.
    @Test func anItemTheVaultRefusesRollsBackTheWholeImport() throws {
        let cli = CLI()
        try cli.initVault()
        let tooLong = String(repeating: "a", count: 70 * 1024)
        let json = #"{"format":"vaultkit-export","version":1,"items":[{"service":"first","account":"a","secret":"one"},"#
            + #"{"service":"second","account":""# + tooLong + #"","secret":"two"}]}"#
        let result = try cli.run(["import", "--format", "json", "-"], stdin: Data(json.utf8))
        #expect(result.status == 1)
        #expect(result.stderr == "vault: account is longer than 64 KiB\n")
        #expect(try cli.run("list").stdout.isEmpty)
    }

    /// The import names a login after the site a browser would send its password to.
    @Test func aURLWithABackslashIsImportedUnderTheHostABrowserSees() throws {
        let cli = CLI()
        try cli.initVault()
        let file = cli.directory + "/logins.csv"
        try Data("url,username,password\nhttps://evil.example\\@github.com/,al,pw\n".utf8).write(to: URL(fileURLWithPath: file))
        let imported = try cli.run("import", "--format", "firefox", file)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run("list").stdout == "evil.example\tal\n")
    }

    /// Names, labels and secrets holding terminal controls (C1, bidi overrides, line
    /// separators) are written to JSON as \u escapes, and read back as the same text.
    @Test func exportEscapesTerminalControlsAndReadsBackTheSame() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.run(["set", "csi\u{9B}31m", "rtl\u{202E}gpj.exe", "--label", "osc\u{9D}0;x\u{7}\u{2028}"], stdin: Data("s\u{2066}\u{85}\n".utf8))
        let export = try cli.run(Self.exportArguments)
        #expect(export.status == 0, "\(export.stderr)")
        for raw: [UInt8] in [[0xc2, 0x9b], [0xe2, 0x80, 0xae], [0xc2, 0x9d], [0x07], [0xe2, 0x80, 0xa8], [0xe2, 0x81, 0xa6], [0xc2, 0x85]] {
            #expect(export.standardOutput.range(of: Data(raw)) == nil, "raw \(raw) in the export")
        }
        #expect(export.stdout.contains(#""service":"csi\u009b31m","account":"rtl\u202egpj.exe","label":"osc\u009d0;x\u0007\u2028""#), "\(export.stdout)")
        #expect(export.stdout.contains(#""secret":"s\u2066\u0085""#), "\(export.stdout)")
        let target = CLI(#function + "-target")
        try target.initVault()
        #expect(try target.run(["import", "--format", "json", "-"], stdin: export.standardOutput).status == 0)
        #expect(try target.run("get", "csi\u{9B}31m", "rtl\u{202E}gpj.exe").standardOutput == Data("s\u{2066}\u{85}\n".utf8))
        #expect(try target.run("list").stdout == (try cli.run("list").stdout))
    }

    @Test func anItemTwiceInTheFileIsADuplicate() throws {
        let cli = CLI()
        try cli.initVault()
        let file = cli.directory + "/twice.csv"
        try Data("url,username,password\nhttps://a.example/x,al,first-pw\nhttps://a.example/y,al,second-pw\n".utf8).write(to: URL(fileURLWithPath: file))
        let refused = try cli.run("import", "--format", "firefox", file)
        #expect(refused.status == 45)
        #expect(try cli.run("list").stdout.isEmpty)
        let overwritten = try cli.run("import", "--format", "firefox", "--overwrite", file)
        #expect(overwritten.stdout.hasPrefix("imported 1 item (0 replaced)"))
        #expect(try cli.run("get", "a.example", "al").stdout == "second-pw\n")
    }

    @Test(arguments: [
        ("bitwarden", "bitwarden.json", "imported 3 items (0 replaced), skipped 2 entries without a password or not a login\n", "login.example.com", "alice@example.com", "p@ss \"quoted\" é\\"),
        ("chrome", "chrome.csv", "imported 2 items (0 replaced), skipped 1 entry without a password or not a login\n", "app.example.com", "bob", "pa,ss"),
        ("firefox", "firefox.csv", "imported 2 items (0 replaced), skipped 0 entries without a password or not a login\n", "www.mozilla.org", "fox", "firefox-pass"),
    ])
    func importsEachManagersExport(format: String, file: String, report: String, service: String, account: String, secret: String) throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("import", "--format", format, FormatFixtures.path(file))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == report)
        #expect(try cli.run("get", service, account).stdout == secret + "\n")
    }

    /// A broken file is refused before the vault is unlocked, in one line that names the
    /// place and holds none of the file's text.
    @Test func aMalformedFileIsRefusedWithoutItsContents() throws {
        let cli = CLI()
        try cli.initVault()
        let file = cli.directory + "/broken.csv"
        try Data("name,url,username,password\nsite,https://s.example,user,\"leaked-password\nnext".utf8).write(to: URL(fileURLWithPath: file))
        let result = try cli.run(["import", "--format", "chrome", file], env: ["VAULT_PASSPHRASE": "wrong"])
        #expect(result.status == 1)
        #expect(result.stderr == "vault: invalid CSV at line 2: a quoted field is not terminated\n")
        #expect(!result.stderr.contains("leaked"))
    }

    @Test func aMissingFileIsReported() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("import", "--format", "json", cli.directory + "/nope.json")
        #expect(result.status == 1)
        #expect(result.stderr == "vault: cannot read \(cli.directory)/nope.json: no such file or directory\n")
    }
}
