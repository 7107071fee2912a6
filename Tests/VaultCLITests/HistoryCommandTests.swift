import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault history`, `get --version`, `restore`, `purge-history`, `log`, `config
/// history-retention` and `--no-history`, as processes on a real vault.
@Suite(.offCooperativePool) struct HistoryCommandTests {
    /// The fields of one `vault history` line.
    static func fields(_ line: Substring) -> [String] { line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    @Test func historyListsVersionsNewestFirstWithWriterAndSizeButNoSecret() throws {
        var cli = CLI()
        cli.environment["VAULT_WRITER"] = "ci@runner-1"
        try cli.initVault()
        try cli.set("svc", "acct", "first-secret")
        try cli.set("svc", "acct", "second")
        cli.environment["VAULT_WRITER"] = "alice@laptop"
        try cli.set("svc", "acct", "3rd")
        let result = try cli.run("history", "svc", "acct")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        #expect(!result.stdout.contains("first-secret") && !result.stdout.contains("second") && !result.stdout.contains("3rd"))
        let rows = Self.lines(result.stdout).map(Self.fields)
        #expect(rows.map { $0[0] } == ["3", "2", "1"])
        #expect(rows.map { $0[2] } == ["3", "6", "12"])
        #expect(rows.map { $0[3] } == ["alice@laptop", "ci@runner-1", "ci@runner-1"])
        #expect(rows.map { $0[4] } == ["set", "set", "set"])
        #expect(rows[0][5] == "current")
        #expect(rows[1][5].hasPrefix("archived ") && rows[1][5].hasSuffix(" by alice@laptop (set)"), "\(rows[1])")
        #expect(rows[2][5].hasSuffix(" by ci@runner-1 (set)"), "\(rows[2])")
        #expect(rows.allSatisfy { $0.count == 6 })
    }

    @Test func historyJSONIsAnArrayOfVersionsWithoutSecrets() throws {
        var cli = CLI()
        cli.environment["VAULT_WRITER"] = "w"
        try cli.initVault()
        #expect(try cli.run(["add", "svc", "acct", "--label", "L", "--generic", "G"], stdin: Data("hunter1\n".utf8)).status == 0)
        #expect(try cli.run(["update", "svc", "acct"], stdin: Data("hunter22\n".utf8)).status == 0)
        let result = try cli.run("history", "svc", "acct", "--json")
        #expect(result.status == 0)
        #expect(!result.stdout.contains("hunter"))
        let array = try #require(try JSONSerialization.jsonObject(with: result.standardOutput) as? [[String: Any]])
        #expect(array.count == 2)
        let keys: Set = ["version", "service", "account", "label", "generic", "created", "modified", "size", "writer", "operation", "archived", "archivedBy", "archivedBecause"]
        #expect(Set(array[0].keys) == keys)
        #expect(array.map { $0["version"] as? Int } == [2, 1])
        #expect(array.map { $0["operation"] as? String } == ["update", "add"])
        #expect(array.map { $0["size"] as? Int } == [8, 7])
        #expect(array[0]["archived"] is NSNull && array[0]["archivedBy"] is NSNull && array[0]["archivedBecause"] is NSNull)
        #expect(array[1]["archived"] is String)
        #expect(array[1]["archivedBy"] as? String == "w")
        #expect(array[1]["archivedBecause"] as? String == "update")
        #expect(array[1]["label"] as? String == "L" && array[1]["generic"] as? String == "G")
    }

    @Test func getVersionReadsAnEarlierVersionInEveryForm() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run(["set", "svc", "acct", "--label", "old label", "--generic", "old generic"], stdin: Data("old-secret\n".utf8)).status == 0)
        #expect(try cli.run(["set", "svc", "acct", "--label", "new label", "--generic", "new generic"], stdin: Data("new-secret\n".utf8)).status == 0)
        #expect(try cli.run("get", "svc", "acct", "--version", "1").stdout == "old-secret\n")
        #expect(try cli.run("get", "svc", "acct", "--version", "2").stdout == "new-secret\n")
        #expect(try cli.run("get", "svc", "acct", "--version", "1", "--generic").stdout == "old generic\n")
        let json = try cli.run("get", "svc", "acct", "--version", "1", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        #expect(object["secret"] as? String == "old-secret")
        #expect(object["label"] as? String == "old label")
        #expect(try cli.run("get", "svc", "acct").stdout == "new-secret\n")
    }

    /// A rotation script wrote the wrong secret: the previous one comes back as a new version.
    @Test func restoreUndoesABadSet() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("db.internal", "app", "good-password")
        try cli.set("db.internal", "app", "garbage")
        let restore = try cli.run("restore", "db.internal", "app", "--version", "1")
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.isEmpty && restore.stderr.isEmpty)
        #expect(try cli.run("get", "db.internal", "app").stdout == "good-password\n")
        let rows = Self.lines(try cli.run("history", "db.internal", "app").stdout).map(Self.fields)
        #expect(rows.map { $0[0] } == ["3", "2", "1"])
        #expect(rows[0][4] == "restore" && rows[0][5] == "current")
        #expect(rows[1][5].hasSuffix("(restore)"))
        // The restore is itself a version: the bad one can be had back too.
        #expect(try cli.run("get", "db.internal", "app", "--version", "2").stdout == "garbage\n")
    }

    @Test func restoreBringsBackADeletedItem() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "keep-me")
        #expect(try cli.run("delete", "svc", "acct").status == 0)
        #expect(try cli.run("get", "svc", "acct").status == 44)
        let rows = Self.lines(try cli.run("history", "svc", "acct").stdout).map(Self.fields)
        #expect(rows.count == 1)
        #expect(rows[0][5].hasSuffix("(delete)"), "\(rows)")
        #expect(try cli.run("restore", "svc", "acct", "--version", rows[0][0]).status == 0)
        #expect(try cli.run("get", "svc", "acct").stdout == "keep-me\n")
        #expect(try cli.run("list").stdout == "svc\tacct\n")
    }

    @Test func restoreAfterDeletingAWholeService() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "a", "secret-a")
        try cli.set("svc", "b", "secret-b")
        #expect(try cli.run("delete", "svc", "--all").status == 0)
        #expect(try cli.run("list").stdout.isEmpty)
        for (account, secret) in [("a", "secret-a"), ("b", "secret-b")] {
            let number = try #require(Self.lines(try cli.run("history", "svc", account).stdout).first.map(Self.fields)?[0])
            #expect(try cli.run("restore", "svc", account, "--version", number).status == 0)
            #expect(try cli.run("get", "svc", account).stdout == "\(secret)\n")
        }
    }

    /// A version that was never kept: a clear message, status 44, and nothing changed.
    @Test func anUnknownVersionIsNotFoundAndChangesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "one")
        try cli.set("svc", "acct", "two")
        let historyBefore = try cli.run("history", "svc", "acct").stdout
        let get = try cli.run("get", "svc", "acct", "--version", "9")
        #expect(get.status == 44)
        #expect(get.stdout.isEmpty)
        #expect(get.isOneErrorLine)
        #expect(get.stderr == "vault: no version 9 of service 'svc', account 'acct' ('vault history' lists the versions kept)\n", "\(get.stderr)")
        let restore = try cli.run("restore", "svc", "acct", "--version", "9")
        #expect(restore.status == 44)
        #expect(restore.stderr == get.stderr)
        #expect(try cli.run("history", "svc", "acct").stdout == historyBefore)
        #expect(try cli.run("get", "svc", "acct").stdout == "two\n")
        let missing = try cli.run("history", "none", "such")
        #expect(missing.status == 44)
        #expect(missing.stderr == "vault: item not found: service 'none', account 'such'\n")
        #expect(try cli.run("restore", "none", "such", "--version", "1").status == 44)
    }

    @Test func noHistoryKeepsNoVersion() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("token", "svc", "token-1")
        #expect(try cli.run(["set", "token", "svc", "--no-history"], stdin: Data("token-2\n".utf8)).status == 0)
        #expect(try cli.run(["update", "token", "svc", "--no-history"], stdin: Data("token-3\n".utf8)).status == 0)
        let rows = Self.lines(try cli.run("history", "token", "svc").stdout)
        #expect(rows.count == 1, "\(rows)")
        #expect(rows.first.map(Self.fields)?[5] == "current")
        // Writes that keep nothing do not number a new version either.
        #expect(try cli.run("get", "token", "svc", "--version", "1").stdout == "token-3\n")
        #expect(try cli.run("get", "token", "svc", "--version", "2").status == 44)
        #expect(try cli.run("delete", "token", "svc", "--no-history").status == 0)
        #expect(try cli.run("history", "token", "svc").status == 44)
        #expect(try cli.run(["add", "fresh", "x", "--no-history"], stdin: Data("v\n".utf8)).status == 0)
        try cli.set("other", "y", "v1")
        #expect(try cli.run("delete", "other", "--all", "--no-history").status == 0)
        #expect(try cli.run("history", "other", "y").status == 44)
    }

    @Test func purgeHistoryOfOneItemKeepsTheItemAndOthers() throws {
        let cli = CLI()
        try cli.initVault()
        for secret in ["a1", "a2", "a3"] { try cli.set("svc", "a", secret) }
        for secret in ["b1", "b2"] { try cli.set("svc", "b", secret) }
        let purge = try cli.run("purge-history", "svc", "a", "--yes")
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(purge.stdout.hasPrefix("purged 2 versions; "), "\(purge.stdout)")
        #expect(purge.stdout.contains("backups"))
        #expect(Self.lines(purge.stdout).count == 1)
        #expect(Self.lines(try cli.run("history", "svc", "a").stdout).count == 1)
        #expect(try cli.run("get", "svc", "a").stdout == "a3\n")
        #expect(try cli.run("get", "svc", "a", "--version", "1").status == 44)
        #expect(Self.lines(try cli.run("history", "svc", "b").stdout).count == 2)
        #expect(try cli.run("verify").stdout == "ok: 2 items\n")
    }

    @Test func purgeHistoryOfTheWholeVault() throws {
        let cli = CLI()
        try cli.initVault()
        for secret in ["a1", "a2"] { try cli.set("svc", "a", secret) }
        for secret in ["b1", "b2", "b3"] { try cli.set("svc", "b", secret) }
        try cli.set("gone", "c", "c1")
        #expect(try cli.run("delete", "gone", "c").status == 0)
        let purge = try cli.run("purge-history", "-y")
        #expect(purge.status == 0, "\(purge.stderr)")
        #expect(purge.stdout.hasPrefix("purged 4 versions; "), "\(purge.stdout)")
        #expect(try cli.run("history", "gone", "c").status == 44)
        #expect(Self.lines(try cli.run("history", "svc", "b").stdout).count == 1)
        #expect(try cli.run("purge-history", "--yes").stdout.hasPrefix("purged 0 versions; "))
        #expect(try cli.run("verify").stdout == "ok: 2 items\n")
    }

    /// Without a terminal to ask on, a purge needs --yes: a usage error, and nothing purged.
    @Test func purgeWithoutATerminalNeedsYes() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "a", "one")
        try cli.set("svc", "a", "two")
        for arguments in [["purge-history"], ["purge-history", "svc", "a"]] {
            let result = try cli.run(arguments, stdin: Data("y\n".utf8))
            #expect(result.status == 2, "\(arguments)")
            #expect(result.isOneErrorLine)
            #expect(result.stderr.contains("--yes"))
        }
        #expect(Self.lines(try cli.run("history", "svc", "a").stdout).count == 2)
        #expect(try cli.run("purge-history", "svc").status == 2)
    }

    @Test func logListsChangesNewestFirst() throws {
        var cli = CLI()
        try cli.initVault()
        cli.environment["VAULT_WRITER"] = "first-writer"
        try cli.set("svc", "a", "log-secret-1")
        cli.environment["VAULT_WRITER"] = "second-writer"
        #expect(try cli.run(["add", "svc", "b"], stdin: Data("log-secret-2\n".utf8)).status == 0)
        try cli.set("svc", "a", "log-secret-3")
        #expect(try cli.run("delete", "svc", "b").status == 0)
        let log = try cli.run("log")
        #expect(log.status == 0, "\(log.stderr)")
        #expect(!log.stdout.contains("log-secret"))
        let rows = Self.lines(log.stdout).map(Self.fields)
        #expect(rows.map { "\($0[1]) \($0[2]) \($0[3]) \($0[4]) \($0[5])" } == [
            "second-writer delete svc b 1",
            "second-writer set svc a 2",
            "second-writer add svc b 1",
            "first-writer set svc a 1",
        ])
        #expect(rows.map { $0[0] } == rows.map { $0[0] }.sorted(by: >))
        #expect(Self.lines(try cli.run("log", "--limit", "2").stdout).map(Self.fields).map { $0[2] } == ["delete", "set"])
        let json = try #require(try JSONSerialization.jsonObject(with: try cli.run("log", "--json", "--limit", "1").standardOutput) as? [[String: Any]])
        #expect(json.count == 1)
        #expect(Set(json[0].keys) == ["time", "writer", "operation", "service", "account", "version"])
        #expect(json[0]["operation"] as? String == "delete" && json[0]["account"] as? String == "b" && json[0]["version"] as? Int == 1)
        #expect(try cli.run("log", "--limit", "0").status == 2)
    }

    @Test func retentionIsAVaultSetting() throws {
        let cli = CLI()
        try cli.initVault()
        #expect(try cli.run("config", "history-retention").stdout == "10\n")
        #expect(try cli.run("config", "history-retention", "2").status == 0)
        #expect(try cli.run("config", "history-retention").stdout == "2\n")
        for n in 1...5 { try cli.set("svc", "acct", "v\(n)") }
        let numbers = Self.lines(try cli.run("history", "svc", "acct").stdout).map { Self.fields($0)[0] }
        #expect(numbers == ["5", "4", "3"])
        #expect(try cli.run("config", "history-retention", "-1").status == 2)
        #expect(try cli.run("config", "history-retention", "0").status == 0)
        try cli.set("svc", "acct", "v6")
        #expect(Self.lines(try cli.run("history", "svc", "acct").stdout).count == 1)
    }

    /// Through the agent, with no passphrase: every history command and `--no-history`.
    @Test func historyCommandsRunThroughTheAgent() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            #expect(try cli.runThroughAgent(["set", "s", "a"], agent: agent, stdin: Data("second\n".utf8)).status == 0)
            let history = try cli.runThroughAgent(["history", "s", "a"], agent: agent)
            #expect(history.status == 0, "\(history.stderr)")
            #expect(Self.lines(history.stdout).count == 2)
            #expect(try cli.runThroughAgent(["get", "s", "a", "--version", "1"], agent: agent).stdout == "secret\n")
            #expect(try cli.runThroughAgent(["get", "s", "a", "--version", "7"], agent: agent).status == 44)
            #expect(try cli.runThroughAgent(["restore", "s", "a", "--version", "1"], agent: agent).status == 0)
            #expect(try cli.runThroughAgent(["get", "s", "a"], agent: agent).stdout == "secret\n")
            #expect(try cli.runThroughAgent(["set", "s", "a", "--no-history"], agent: agent, stdin: Data("third\n".utf8)).status == 0)
            #expect(Self.lines(try cli.runThroughAgent(["history", "s", "a"], agent: agent).stdout).count == 3)
            #expect(Self.lines(try cli.runThroughAgent(["log"], agent: agent).stdout).count == 3)
            #expect(try cli.runThroughAgent(["config", "history-retention", "4"], agent: agent).status == 0)
            #expect(try cli.runThroughAgent(["config", "history-retention"], agent: agent).stdout == "4\n")
            #expect(try cli.runThroughAgent(["purge-history", "--yes"], agent: agent).stdout.hasPrefix("purged 2 versions"))
            #expect(try cli.runThroughAgent(["delete", "s", "a", "--no-history"], agent: agent).status == 0)
            #expect(try cli.runThroughAgent(["history", "s", "a"], agent: agent).status == 44)
        }
    }

    /// Through the agent, each command's writes record the command's own `VAULT_WRITER`
    /// (or, without one, the default name), not the name of whoever unlocked the vault.
    @Test func theAgentRecordsEachCommandsWriter() throws {
        try CLI.withUnlockedVault { (cli, agent) throws in
            let env = agent.environment
            var first = try cli.run(["set", "s", "a"], stdin: Data("two\n".utf8), env: env.merging(["VAULT_WRITER": "deploy@ci"]) { $1 }, unset: ["VAULT_PASSPHRASE"])
            #expect(first.status == 0, "\(first.stderr)")
            first = try cli.run(["delete", "s", "a"], env: env.merging(["VAULT_WRITER": "cleanup-job"]) { $1 }, unset: ["VAULT_PASSPHRASE"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try cli.run(["restore", "s", "a", "--version", "2"], env: env.merging(["VAULT_WRITER": "alice@laptop"]) { $1 }, unset: ["VAULT_PASSPHRASE"]).status == 0)
            let rows = Self.lines(try cli.runThroughAgent(["log"], agent: agent).stdout).map(Self.fields)
            #expect(rows.map { "\($0[1]) \($0[2])" }.prefix(3) == ["alice@laptop restore", "cleanup-job delete", "deploy@ci set"], "\(rows)")
            let defaultName = try #require(rows.last?[1])
            #expect(defaultName.contains("@") && defaultName != "deploy@ci")
            // A write without VAULT_WRITER records the default name again.
            #expect(try cli.runThroughAgent(["set", "s", "a"], agent: agent, stdin: Data("three\n".utf8)).status == 0)
            #expect(Self.lines(try cli.runThroughAgent(["log", "--limit", "1"], agent: agent).stdout).map(Self.fields).first?[1] == defaultName)
        }
    }

    @Test func anInvalidWriterNameIsRefused() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run(["set", "s", "a"], stdin: Data("x\n".utf8), env: ["VAULT_WRITER": "two\nlines"])
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("a writer name must be 1 to 255 bytes of UTF-8 without control characters"), "\(result.stderr)")
        #expect(try cli.run("list").stdout.isEmpty)
    }

    /// A host key records its host's name; `VAULT_WRITER` does not change it.
    @Test func aHostKeyRecordsItsHostsName() throws {
        let cli = CLI()
        try cli.initVault()
        let key = cli.directory + "/host.key"
        let publicKey = try cli.run(["host", "keygen", "--out", key], vault: false).stdout.trimmingCharacters(in: .newlines)
        let fingerprint = try cli.run(["host", "add", "web-2", publicKey]).stdout.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        let set = try cli.run(["set", "s", "a", "--host-key", key], stdin: Data("x\n".utf8), env: ["VAULT_WRITER": "someone-else"], unset: ["VAULT_PASSPHRASE"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(Self.lines(try cli.run("history", "s", "a").stdout).map(Self.fields).first?[3] == "web-2")
    }
}

/// `vault purge-history` asks on a terminal, made by util-linux `script(1)`.
@Suite(.offCooperativePool, .enabled(if: FileManager.default.isExecutableFile(atPath: TerminalSession.script)))
struct PurgeHistoryTerminalTests {
    @Test func purgeAsksOnATerminalAndOnlyYesPurges() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "a", "one")
        try cli.set("svc", "a", "two")
        let no = try TerminalSession(["purge-history", "svc", "a", "--vault", cli.vaultPath], environment: cli.environment.merging(["XDG_STATE_HOME": cli.directory + "/state"]) { $1 })
        try no.answer("Delete every kept version of service 'svc', account 'a' for good? [y/N]", with: "n")
        let declined = no.finish()
        #expect(declined.status == 1)
        #expect(declined.stdout.contains("vault: cancelled: nothing was changed"), "\(declined.stdout)")
        #expect(HistoryCommandTests.lines(try cli.run("history", "svc", "a").stdout).count == 2)

        let yes = try TerminalSession(["purge-history", "--vault", cli.vaultPath], environment: cli.environment.merging(["XDG_STATE_HOME": cli.directory + "/state"]) { $1 })
        try yes.answer("Delete every kept version of every item for good? [y/N]", with: "y")
        let accepted = yes.finish()
        #expect(accepted.status == 0, "\(accepted.stdout)")
        #expect(accepted.stdout.contains("purged 1 version; "), "\(accepted.stdout)")
        #expect(HistoryCommandTests.lines(try cli.run("history", "svc", "a").stdout).count == 1)
    }
}
