import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault set/add/update/get/delete` through the real binary, pipes and exit statuses.
@Suite(.offCooperativePool) struct ItemCommandTests {
    @Test func setThenGetWritesTheSecretAndOneNewline() throws {
        let cli = CLI()
        try cli.initVault()
        let set = try cli.run("set", "api.example.com", "alice", stdin: "s3cr3t\n")
        #expect(set.status == 0)
        #expect(set.stdout.isEmpty && set.stderr.isEmpty)
        let get = try cli.run("get", "api.example.com", "alice")
        #expect(get.status == 0)
        #expect(get.stdout == "s3cr3t\n")
        #expect(get.stderr.isEmpty)
    }

    /// One trailing newline is removed on input and one added on output, so any bytes
    /// (with or without a final newline of their own) come back exactly.
    @Test(arguments: [
        Data("with spaces  and\ttabs ".utf8),
        Data("line one\nline two\n\n".utf8),
        Data("Grüße, 秘密, пароль 🔑".utf8),
        Data("crlf\r\n".utf8),
        Data((0...255).map { UInt8($0) }),
        Data([0, 0, 10, 0, 255, 10]),
        Data(),
    ])
    func secretBytesRoundTripExactly(secret: Data) throws {
        let cli = CLI()
        try cli.initVault()
        let set = try cli.run(["set", "svc", "acct"], stdin: secret + Data("\n".utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let get = try cli.run(["get", "svc", "acct"])
        #expect(get.status == 0)
        #expect(get.standardOutput == secret + Data("\n".utf8))
        #expect(get.standardError.isEmpty)
    }

    @Test func inputWithoutTrailingNewlineIsStoredAsIs() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("set", "svc", "acct", stdin: "no newline").status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout == "no newline\n")
        // Only one newline is removed: the second belongs to the secret.
        #expect(try cli.run("set", "svc", "acct", stdin: "two\n\n").status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout == "two\n\n")
    }

    @Test func getJSONWritesOneObjectWithAllAttributes() throws {
        let cli = CLI()
        try cli.initVault()
        let set = try cli.run("set", "api.example.com", "alice", "--label", "Example \"API\"", "--generic", "client-id=7", stdin: "tok\"en\n")
        #expect(set.status == 0)
        let result = try cli.run("get", "api.example.com", "alice", "--json")
        #expect(result.status == 0)
        #expect(result.stdout.hasSuffix("}\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any])
        #expect(Set(object.keys) == ["service", "account", "label", "generic", "created", "modified", "secret"])
        #expect(object["service"] as? String == "api.example.com")
        #expect(object["account"] as? String == "alice")
        #expect(object["label"] as? String == "Example \"API\"")
        #expect(object["generic"] as? String == "client-id=7")
        #expect(object["secret"] as? String == "tok\"en")
        let created = try #require(object["created"] as? String)
        let modified = try #require(object["modified"] as? String)
        let parsed = try #require(ISO8601DateFormatter().date(from: created))
        #expect(abs(parsed.timeIntervalSinceNow) < 300)
        #expect(ISO8601DateFormatter().date(from: modified) != nil)
    }

    @Test func getJSONWithoutLabelOrGenericWritesNull() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "x")
        let result = try cli.run("get", "svc", "acct", "--json")
        #expect(result.stdout.contains("\"label\":null"))
        #expect(result.stdout.contains("\"generic\":null"))
    }

    @Test func getJSONRefusesASecretThatIsNotUTF8() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run(["set", "svc", "acct"], stdin: Data([0xff, 0xfe, 0x00])).status == 0)
        let result = try cli.run("get", "svc", "acct", "--json")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("not UTF-8"))
    }

    @Test func getGenericWritesOnlyTheGenericData() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("set", "svc", "acct", "--generic", "app data", stdin: "secret-value\n").status == 0)
        let result = try cli.run("get", "svc", "acct", "--generic")
        #expect(result.status == 0)
        #expect(result.stdout == "app data\n")
    }

    @Test func setKeepsLabelAndGenericWhenOmitted() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("set", "svc", "acct", "--label", "L", "--generic", "G", stdin: "one\n").status == 0)
        #expect(try cli.run("set", "svc", "acct", stdin: "two\n").status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout == "two\n")
        #expect(try cli.run("get", "svc", "acct", "--generic").stdout == "G\n")
        #expect(try cli.run("get", "svc", "acct", "--json").stdout.contains("\"label\":\"L\""))
    }

    @Test func addFailsWith45WhenTheItemExistsAndKeepsTheSecret() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("add", "svc", "acct", stdin: "first\n").status == 0)
        let again = try cli.run("add", "svc", "acct", stdin: "second\n")
        #expect(again.status == 45)
        #expect(again.isOneErrorLine)
        #expect(again.stderr.contains("already exists"))
        #expect(!again.stderr.contains("second"))
        #expect(try cli.run("get", "svc", "acct").stdout == "first\n")
    }

    @Test func updateFailsWith44WhenTheItemIsMissing() throws {
        let cli = CLI()
        try cli.initVault()
        let missing = try cli.run("update", "svc", "acct", stdin: "value\n")
        #expect(missing.status == 44)
        #expect(missing.isOneErrorLine)
        #expect(missing.stderr.contains("not found"))
        #expect(try cli.run("get", "svc", "acct").status == 44)

        #expect(try cli.run("add", "svc", "acct", "--label", "L", stdin: "old\n").status == 0)
        #expect(try cli.run("update", "svc", "acct", stdin: "new\n").status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout == "new\n")
        #expect(try cli.run("get", "svc", "acct", "--json").stdout.contains("\"label\":\"L\""))
    }

    @Test func getOfAMissingItemFailsWith44NamingIt() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("get", "svc", "nobody")
        #expect(result.status == 44)
        #expect(result.stdout.isEmpty)
        #expect(result.isOneErrorLine)
        #expect(result.stderr == "vault: item not found: service 'svc', account 'nobody'\n")
    }

    @Test func deleteRemovesTheItemAndFailsWith44WhenMissing() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "x")
        #expect(try cli.run("delete", "svc", "acct").status == 0)
        #expect(try cli.run("get", "svc", "acct").status == 44)
        let again = try cli.run("delete", "svc", "acct")
        #expect(again.status == 44)
        #expect(again.isOneErrorLine)
    }

    @Test func deleteAllRemovesEveryItemOfOneService() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "a", "1")
        try cli.set("svc", "b", "2")
        try cli.set("other", "a", "3")
        #expect(try cli.run("delete", "svc", "--all").status == 0)
        #expect(try cli.run("list").stdout == "other\ta\n")
        #expect(try cli.run("delete", "svc", "--all").status == 0)
    }
}
