import Foundation
import Testing
import TestSupport
import TestTraits

@Suite(.offCooperativePool) struct ListCommandTests {
    @Test func listsSortedServiceTabAccountLinesWithoutSecrets() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("zeta", "bob", "secret-one")
        try cli.set("alpha", "carol", "secret-two")
        try cli.set("alpha", "alice", "secret-three")
        let result = try cli.run("list")
        #expect(result.status == 0)
        #expect(result.stdout == "alpha\talice\nalpha\tcarol\nzeta\tbob\n")
        #expect(!result.stdout.contains("secret-"))
        #expect(result.stderr.isEmpty)
    }

    @Test func anEmptyVaultListsNothing() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run("list")
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(try cli.run("list", "--json").stdout == "[]\n")
    }

    @Test func filtersByService() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("a", "1", "x")
        try cli.set("b", "2", "y")
        #expect(try cli.run("list", "--service", "b").stdout == "b\t2\n")
        #expect(try cli.run("list", "--service", "none").stdout.isEmpty)
    }

    /// Tabs, newlines and backslashes in names are escaped C-style so each item stays
    /// one line with one raw tab; `--json` gives the names unescaped.
    @Test func escapesTabsNewlinesAndBackslashesInNames() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("tab\there", "new\nline", "x")
        try cli.set("back\\slash", "cr\rbell\u{07}", "y")
        let result = try cli.run("list")
        #expect(result.status == 0)
        #expect(result.stdout == "back\\\\slash\tcr\\rbell\\x07\ntab\\there\tnew\\nline\n")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.filter { $0 == "\t" }.count == 1 })

        let json = try cli.run("list", "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [[String: Any]])
        #expect(array.map { $0["service"] as? String } == ["back\\slash", "tab\there"])
        #expect(array.map { $0["account"] as? String } == ["cr\rbell\u{07}", "new\nline"])
    }

    @Test func jsonIsAnArrayOfObjectsWithoutSecrets() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("set", "svc", "acct", "--label", "L", "--generic", "G", stdin: "hunter2\n").status == 0)
        try cli.set("svc", "other", "hunter3")
        let result = try cli.run("list", "--json")
        #expect(result.status == 0)
        #expect(!result.stdout.contains("hunter"))
        let array = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [[String: Any]])
        #expect(array.count == 2)
        #expect(Set(array[0].keys) == ["service", "account", "label", "generic", "created", "modified"])
        #expect(array[0]["account"] as? String == "acct")
        #expect(array[0]["label"] as? String == "L")
        #expect(array[0]["generic"] as? String == "G")
        #expect(array[1]["account"] as? String == "other")
    }
}
