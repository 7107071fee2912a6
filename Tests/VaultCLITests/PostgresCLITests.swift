import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
import VaultAgent

/// `vault` on a vault in PostgreSQL (docs/CLI.md, "PostgreSQL vaults"): the real binary
/// against the throwaway server scripts/test.sh starts, which exports its URL (without
/// the password) and `PGPASSFILE`, where libpq finds the password.
struct PostgresCLI {
    let cli: CLI
    /// `postgresql://vaultkit@127.0.0.1:PORT/vaultkit#NAME`, a name no other test uses.
    let url: String

    init(_ label: String = #function, name: String? = nil, passphrase: String = "correct horse") throws {
        cli = CLI(label, passphrase: passphrase)
        url = try Self.serverURL() + "#" + (name ?? "cli-" + UUID().uuidString.lowercased())
    }

    static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else {
            Issue.record("VAULTKIT_TEST_POSTGRES_URL is not set: run `eval \"$(scripts/postgres-test-cluster.sh start)\"` first")
            throw CancellationError()
        }
        return url
    }

    /// Runs `vault ARGUMENTS... --vault URL`.
    @discardableResult
    func run(_ arguments: [String], stdin: String = "", env: [String: String] = [:], unset: [String] = []) throws -> ProcessResult {
        try cli.run(arguments + ["--vault", url], stdin: Data(stdin.utf8), env: env, unset: unset, vault: false)
    }
}

@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresCLITests {
    /// The same steps on a file and on PostgreSQL give the same output and statuses.
    @Test func itemCommandsBehaveAsOnAFile() throws {
        let postgres = try PostgresCLI()
        let file = CLI()
        let steps: [(arguments: [String], stdin: String)] = [
            (["init"] + CLI.cheapKDF, ""),
            (["set", "api.example.com", "alice"], "s3cret\n"),
            (["add", "api.example.com", "bob", "--label", "Bob's"], "other\n"),
            (["add", "api.example.com", "bob"], "again\n"),
            (["get", "api.example.com", "alice"], ""),
            (["list"], ""),
            (["read", "vault://api.example.com/bob"], ""),
            (["delete", "api.example.com", "alice"], ""),
            (["get", "api.example.com", "alice"], ""),
            (["delete", "api.example.com", "alice"], ""),
            (["list"], ""),
            (["verify"], ""),
        ]
        for step in steps {
            let onFile = try file.run(step.arguments, stdin: Data(step.stdin.utf8))
            let onPostgres = try postgres.run(step.arguments, stdin: step.stdin)
            #expect(onPostgres.status == onFile.status, "\(step.arguments): \(onPostgres.stderr)")
            #expect(onPostgres.stdout == onFile.stdout, "\(step.arguments)")
            #expect(onPostgres.stderr == onFile.stderr, "\(step.arguments)")
        }
        // The steps did something: the second get found nothing, the list kept bob.
        #expect(try postgres.run(["get", "api.example.com", "alice"]).status == 44)
        #expect(try postgres.run(["list"]).stdout == "api.example.com\tbob\n")
    }

    @Test func theWrongPassphraseIsRefusedAsOnAFile() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "x\n").status == 0)
        let wrong = try postgres.run(["get", "s", "a"], env: ["VAULT_PASSPHRASE": "wrong"])
        let file = CLI()
        try file.initVault()
        let wrongOnFile = try file.run(["get", "s", "a"], env: ["VAULT_PASSPHRASE": "wrong"])
        #expect(wrong.status == wrongOnFile.status && wrong.status != 0)
        #expect(wrong.stderr == wrongOnFile.stderr)
        #expect(wrong.stdout.isEmpty)
    }

    @Test func initRefusesAVaultNameThatExists() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "kept\n").status == 0)
        let again = try postgres.run(["init"] + CLI.cheapKDF, env: ["VAULT_PASSPHRASE": "another"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(try postgres.run(["get", "s", "a"]).stdout == "kept\n")
    }

    @Test func aSecondVaultNameInTheSameDatabaseIsAnotherVault() throws {
        let one = try PostgresCLI(passphrase: "first")
        let two = try PostgresCLI(passphrase: "second")
        try #require(one.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(two.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(one.run(["set", "s", "a"], stdin: "one's\n").status == 0)
        try #require(two.run(["set", "s", "b"], stdin: "two's\n").status == 0)
        #expect(try one.run(["list"]).stdout == "s\ta\n")
        #expect(try two.run(["list"]).stdout == "s\tb\n")
        #expect(try two.run(["get", "s", "a"]).status == 44)
        #expect(try one.run(["get", "s", "a"]).stdout == "one's\n")
    }

    @Test func aKeyFileCreatedByInitOpensTheVault() throws {
        let postgres = try PostgresCLI()
        let keyFile = postgres.cli.directory + "/vault.key"
        try #require(postgres.run(["init", "--key-file", keyFile]).status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try #require(postgres.run(["set", "s", "a", "--key-file", keyFile], stdin: "by key\n").status == 0)
        #expect(try postgres.run(["get", "s", "a"], env: ["VAULT_KEY_FILE": keyFile]).stdout == "by key\n")
        // No passphrase opens a key vault.
        #expect(try postgres.run(["get", "s", "a"]).status == 1)
    }

    /// `$VAULT_URL` is used when neither `--vault` nor `$VAULT_PATH` is given.
    @Test func vaultURLComesAfterVaultPath() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "in postgres\n").status == 0)
        let file = CLI()
        try file.initVault()
        try file.set("s", "a", "in the file")
        let byURL = try file.run(["get", "s", "a"], env: ["VAULT_URL": postgres.url], vault: false)
        #expect(byURL.stdout == "in postgres\n", "\(byURL.stderr)")
        let byPath = try file.run(["get", "s", "a"], env: ["VAULT_URL": postgres.url, "VAULT_PATH": file.vaultPath], vault: false)
        #expect(byPath.stdout == "in the file\n", "\(byPath.stderr)")
    }

    /// `vault init` where a vault of that name is says a vault (not a file) exists at the
    /// URL, as the engine's location names it; the scheme is read whatever its case.
    @Test func initOverAVaultSaysAVaultExistsAtTheURL() throws {
        let postgres = try PostgresCLI()
        try postgres.run(["init"] + CLI.cheapKDF)
        let again = try postgres.run(["init"] + CLI.cheapKDF)
        #expect(again.status == 1)
        let described = String(postgres.url.replacingOccurrences(of: "postgresql://", with: "postgres://"))
        #expect(again.stderr == "vault: a vault already exists at \(described); refusing to overwrite it\n", "\(again.stderr)")
        let upperCase = "POSTGRESQL" + postgres.url.drop { $0 != ":" }
        let listed = try postgres.cli.run(["list", "--vault", upperCase], vault: false)
        #expect(listed.status == 0, "\(listed.stderr)")
    }

    /// A password in the URL is refused before anything connects, and never echoed.
    @Test(arguments: [
        "postgresql://vaultkit:Hunter2Pass@127.0.0.1:1/vaultkit#x",
        "postgres://vaultkit:Hunter2Pass@127.0.0.1:1/vaultkit",
        "postgresql://vaultkit@127.0.0.1:1/vaultkit?password=Hunter2Pass#x",
    ])
    func aPasswordInTheURLIsRefused(_ url: String) throws {
        let cli = CLI()
        for arguments in [["get", "s", "a", "--vault", url], ["list", "--vault", url], ["init", "--vault", url] + CLI.cheapKDF] {
            let result = try cli.run(arguments, vault: false)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("must not hold a password"), "\(result.stderr)")
            #expect(!result.stderr.contains("Hunter2Pass") && !result.stdout.contains("Hunter2Pass"))
        }
        let fromEnvironment = try cli.run(["list"], env: ["VAULT_URL": url], vault: false)
        #expect(fromEnvironment.status == 2)
        #expect(fromEnvironment.stderr.contains("$VAULT_URL"), "\(fromEnvironment.stderr)")
        #expect(!fromEnvironment.stderr.contains("Hunter2Pass"))
    }

    @Test func aMalformedVaultNameIsAUsageError() throws {
        let cli = CLI()
        let result = try cli.run(["list", "--vault", try PostgresCLI.serverURL() + "#no/slashes"], vault: false)
        #expect(result.status == 2)
        #expect(result.stderr.contains("vault name"), "\(result.stderr)")
    }

    /// Host key wraps work on a PostgreSQL vault as on a file (docs/FORMAT.md section 12):
    /// another host unlocks with its own key, without the passphrase, until it is removed.
    @Test func aHostKeyUnlocksAPostgresVaultUntilTheHostIsRemoved() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "api.example.com", "alice"], stdin: "s3cr3t\n").status == 0)
        let keyB = postgres.cli.directory + "/b.key", keyC = postgres.cli.directory + "/c.key"
        let publicB = try postgres.cli.run(["host", "keygen", "--out", keyB], vault: false).stdout.trimmingCharacters(in: .newlines)
        let publicC = try postgres.cli.run(["host", "keygen", "--out", keyC], vault: false).stdout.trimmingCharacters(in: .newlines)
        let fingerprint = try postgres.run(["host", "add", "web-2", publicB]).stdout.trimmingCharacters(in: .newlines)
        #expect(fingerprint.hasPrefix("vkid1:"))
        #expect(try postgres.run(["host", "add", "web-3", publicC]).status == 0)
        #expect(try postgres.run(["host", "list"]).stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] } == ["web-2", "web-3"])
        for key in [keyB, keyC] {
            #expect(try postgres.cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        }

        let noPassphrase = ["VAULT_PASSPHRASE": "not the passphrase"]
        let byB = try postgres.run(["get", "api.example.com", "alice", "--host-key", keyB], env: noPassphrase)
        #expect(byB.stdout == "s3cr3t\n", "\(byB.stderr)")
        let byC = try postgres.run(["set", "api.example.com", "bob", "--host-key", keyC], stdin: "written by c\n", env: noPassphrase)
        #expect(byC.status == 0, "\(byC.stderr)")

        #expect(try postgres.run(["host", "remove", "web-2"]).status == 0)
        let removed = try postgres.run(["get", "api.example.com", "alice", "--host-key", keyB], env: noPassphrase)
        #expect(removed.status == 1)
        #expect(removed.stderr.contains("wrong passphrase or key"), "\(removed.stderr)")
        #expect(try postgres.run(["get", "api.example.com", "bob", "--host-key", keyC], env: noPassphrase).stdout == "written by c\n")
        #expect(try postgres.run(["get", "api.example.com", "alice"]).stdout == "s3cr3t\n")
        #expect(try postgres.run(["verify"]).status == 0)
    }

    /// The DBA's attack on a host: the rows of a vault of their own, made for the
    /// host's public key, put in place of the real vault's. The host refuses them.
    @Test func aDBAsOwnVaultPutInPlaceIsRefusedByTheHost() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "db", "app"], stdin: "real value\n").status == 0)
        let key = postgres.cli.directory + "/web2.key"
        let publicKey = try postgres.cli.run(["host", "keygen", "--out", key], vault: false).stdout.trimmingCharacters(in: .newlines)
        let fingerprint = try postgres.run(["host", "add", "web2", publicKey]).stdout.trimmingCharacters(in: .newlines)
        #expect(try postgres.cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        let asHost = { (arguments: [String]) in try postgres.run(arguments + ["--host-key", key], unset: ["VAULT_PASSPHRASE"]) }
        #expect(try asHost(["get", "db", "app"]).stdout == "real value\n")

        let attacker = try PostgresCLI("dba", passphrase: "the DBA's own")
        try #require(attacker.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(attacker.run(["set", "db", "app"], stdin: "DBA's value\n").status == 0)
        #expect(try attacker.run(["host", "add", "web2", publicKey]).status == 0)
        let real = try #require(postgres.url.split(separator: "#").last.map(String.init))
        let forged = try #require(attacker.url.split(separator: "#").last.map(String.init))
        try Self.sql("""
            BEGIN;
            DELETE FROM vaultkit_items WHERE vault = '\(real)';
            DELETE FROM vaultkit_manifest WHERE vault = '\(real)';
            DELETE FROM vaultkit_host_wraps WHERE vault = '\(real)';
            DELETE FROM vaultkit_header WHERE vault = '\(real)';
            CREATE TEMPORARY TABLE forged AS SELECT * FROM vaultkit_header WHERE vault = '\(forged)';
            UPDATE forged SET vault = '\(real)';
            INSERT INTO vaultkit_header SELECT * FROM forged;
            UPDATE vaultkit_items SET vault = '\(real)' WHERE vault = '\(forged)';
            UPDATE vaultkit_manifest SET vault = '\(real)' WHERE vault = '\(forged)';
            UPDATE vaultkit_host_wraps SET vault = '\(real)' WHERE vault = '\(forged)';
            COMMIT;
            """)
        // The DBA's vault now answers under the real name, to its own passphrase.
        let underRealName = try attacker.cli.run(["get", "db", "app", "--vault", postgres.url], vault: false)
        #expect(underRealName.stdout == "DBA's value\n", "\(underRealName.stderr)")
        for arguments in [["get", "db", "app"], ["verify"]] {
            let result = try asHost(arguments)
            #expect(result.status == 1, "\(arguments): \(result.stdout)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("tampered") && result.stderr.contains("not the one pinned for this host key"), "\(result.stderr)")
        }
    }

    /// A DBA who puts back the vault's rows from an earlier snapshot is refused by the
    /// rollback record, and the message speaks of rows restored, not of a file.
    @Test func rowsPutBackFromASnapshotAreRefusedUntilAccepted() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "svc", "acct"], stdin: "old\n").status == 0)
        let name = try #require(postgres.url.split(separator: "#").last.map(String.init))
        let snapshot = "snap_" + name.replacingOccurrences(of: "-", with: "_")
        let tables = ["vaultkit_header", "vaultkit_items", "vaultkit_manifest", "vaultkit_host_wraps"]
        try Self.sql(tables.map { "CREATE TABLE \(snapshot)_\($0) AS SELECT * FROM \($0) WHERE vault = '\(name)';" }.joined(separator: "\n"))
        try #require(postgres.run(["set", "svc", "acct"], stdin: "new\n").status == 0)
        try Self.sql("BEGIN;\n"
            + tables.reversed().map { "DELETE FROM \($0) WHERE vault = '\(name)';" }.joined(separator: "\n")
            + tables.map { "INSERT INTO \($0) SELECT * FROM \(snapshot)_\($0);" }.joined(separator: "\n")
            + "\nCOMMIT;\n" + tables.map { "DROP TABLE \(snapshot)_\($0);" }.joined(separator: "\n"))

        let refused = try postgres.run(["get", "svc", "acct"])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("if you restored the vault's rows on purpose, accept it once with --accept-rollback"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("file"), "\(refused.stderr)")
        #expect(try postgres.run(["get", "svc", "acct", "--accept-rollback"]).stdout == "old\n")
        #expect(try postgres.run(["get", "svc", "acct"]).stdout == "old\n")
    }

    /// Runs `sql` with psql on the test server, as its owner (the DBA).
    static func sql(_ sql: String) throws {
        let url = try PostgresCLI.serverURL()
        let result = try ChildProcess.run("/usr/bin/env", ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url], environment: ProcessInfo.processInfo.environment, standardInput: Data(sql.utf8))
        #expect(result.status == 0, "psql: \(result.stderr)")
    }

    /// `vault unlock` hands a PostgreSQL vault to the agent (docs/AGENT.md): item commands
    /// then need no passphrase, give the same output, and stop using the agent once the
    /// vault is locked or its passphrase is changed by another process.
    @Test func theAgentHoldsAPostgresVault() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "before\n").status == 0)
        let agent = try TestAgent(socketDirectory: postgres.cli.directory)
        defer { agent.stop() }
        let unlock = try postgres.run(["unlock"], env: agent.environment)
        try #require(unlock.status == 0, "\(unlock.stderr)")
        let status = try agent.status(postgres.cli).stdout
        let name = postgres.url.split(separator: "#").last.map(String.init) ?? ""
        #expect(status.contains("unlocked: postgres://") && status.contains("#\(name) (locks after 900 s idle"), "\(status)")

        // Through the agent, without the passphrase: the fast path (get, set) and the parser's.
        let throughAgent = { (arguments: [String], stdin: String) in
            try postgres.run(arguments, stdin: stdin, env: agent.environment, unset: ["VAULT_PASSPHRASE"])
        }
        #expect(try throughAgent(["get", "s", "a"], "").stdout == "before\n")
        #expect(try throughAgent(["set", "s", "b"], "through the agent\n").status == 0)
        #expect(try throughAgent(["list"], "").stdout == "s\ta\ns\tb\n")
        #expect(try throughAgent(["get", "s", "missing"], "").status == 44)
        // The write is in the database: a command without the agent reads it.
        #expect(try postgres.run(["get", "s", "b"]).stdout == "through the agent\n")

        // Locked: the passphrase is needed again.
        #expect(try postgres.run(["lock"], env: agent.environment).status == 0)
        #expect(try agent.status(postgres.cli).stdout.hasSuffix("no vault unlocked\n"))
        #expect(try throughAgent(["get", "s", "a"], "").status != 0)

        // Another process changes the passphrase: the agent lets go at the next request.
        try #require(postgres.run(["unlock"], env: agent.environment).status == 0)
        let passwd = try postgres.run(["passwd"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "new one"])
        try #require(passwd.status == 0, "\(passwd.stderr)")
        #expect(try throughAgent(["get", "s", "a"], "").status != 0)
        #expect(try agent.status(postgres.cli).stdout.hasSuffix("no vault unlocked\n"))
        #expect(try postgres.run(["get", "s", "a"], env: agent.environment.merging(["VAULT_PASSPHRASE": "new one"]) { $1 }).stdout == "before\n")
    }

    /// The agent refuses a PostgreSQL URL holding a password, as the client does, and never
    /// repeats it, even when a hostile client sends one.
    @Test func theAgentRefusesAURLWithAPassword() throws {
        let cli = CLI()
        let agent = try TestAgent(socketDirectory: cli.directory)
        defer { agent.stop() }
        let url = try PostgresCLI.serverURL().replacingOccurrences(of: "vaultkit@", with: "vaultkit:Hunter2Pass@") + "#x"
        let request = AgentRequest.unlock(path: url, credential: SecretBytes("correct horse"), isKey: false, idleTimeoutSeconds: 0)
        guard let connection = RawAgentConnection(agent.socketPath) else { Issue.record("no connection"); return }
        defer { connection.close() }
        connection.send(RawAgentConnection.frame(request.encode().withUnsafeBytes { Array($0) }))
        let answer = connection.readToEnd()
        let response = try answer.dropFirst(4).withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .refused(let reason) = response else { Issue.record("not refused: \(response)"); return }
        #expect(!reason.contains("Hunter2Pass"))
        #expect(try agent.status(cli).stdout.hasSuffix("no vault unlocked\n"))
        let log = agent.stop()
        #expect(!log.stderr.contains("Hunter2Pass") && !log.stdout.contains("Hunter2Pass"))
    }

    /// TLS options travel in the URL's query, as libpq reads them: a verified server is
    /// used, an unverifiable one refused with the cause named.
    @Test func tlsOptionsInTheURLAreHonoured() throws {
        guard let ca = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_CA"],
              let otherCA = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_OTHER_CA"]
        else { Issue.record("VAULTKIT_TEST_POSTGRES_CA is not set (scripts/postgres-test-cluster.sh)"); return }
        let server = try PostgresCLI.serverURL(), name = "#tls-" + UUID().uuidString.lowercased()
        let cli = CLI()
        let verified = server + "?sslmode=verify-full&sslrootcert=" + ca + name
        #expect(try cli.run(["init", "--vault", verified] + CLI.cheapKDF, vault: false).status == 0)
        #expect(try cli.run(["set", "s", "a", "--vault", verified], stdin: Data("over TLS\n".utf8), vault: false).status == 0)
        #expect(try cli.run(["get", "s", "a", "--vault", verified], vault: false).stdout == "over TLS\n")
        let untrusted = try cli.run(["get", "s", "a", "--vault", server + "?sslmode=verify-full&sslrootcert=" + otherCA + name], vault: false)
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout.isEmpty)
        #expect(untrusted.stderr.contains("TLS failed: the server's certificate does not verify"), "\(untrusted.stderr)")
    }

    /// File-only commands say so before asking for anything; `lock` has nothing to do.
    @Test func fileOnlyCommandsNeedAVaultFile() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        let backup = try postgres.run(["backup", postgres.cli.directory + "/copy.vault"])
        #expect(backup.status == 2)
        #expect(backup.stderr.contains("vault backup needs a vault file"), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: postgres.cli.directory + "/copy.vault"))
        #expect(try postgres.run(["lock"], env: ["VAULT_AGENT_SOCKET": postgres.cli.directory + "/agent.sock"]).status == 0)
        // Upgrading has nothing to do: PostgreSQL vaults are never format 1.
        #expect(try postgres.run(["upgrade"]).status == 0)
    }

    /// Moving a file vault into PostgreSQL, as docs/CLI.md shows: export, then import.
    @Test func aFileVaultMovesIntoPostgresByExportAndImport() throws {
        let file = CLI()
        try file.initVault()
        try file.set("api.example.com", "alice", "a's")
        try file.set("db.internal", "app", "app's")
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        let exported = try file.run(["export", "--format", "json", "--plaintext"])
        try #require(exported.status == 0, "\(exported.stderr)")
        let imported = try postgres.run(["import", "--format", "json", "-"], stdin: exported.stdout)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try postgres.run(["list"]).stdout == file.run(["list"]).stdout)
        #expect(try postgres.run(["get", "db.internal", "app"]).stdout == "app's\n")
    }

    /// A hot standby named in the URL (docs/CLI.md, "PostgreSQL vaults"): the commands
    /// work through it as without it, and a malformed bound is a usage error that does
    /// not repeat the URL.
    @Test(.enabled(if: PostgresTestServer.standbySuitesRun, "needs a PostgreSQL server with a standby"))
    func aStandbyNamedInTheURLIsTakenAndChecked() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "x\n").status == 0)
        let standbyURL = try #require(PostgresTestServer.standbyURL)
        let standby = try #require(URLComponents(string: standbyURL))
        let host = try #require(standby.host), port = try #require(standby.port)
        let (base, fragment) = (postgres.url.prefix { $0 != "#" }, postgres.url.drop { $0 != "#" })
        let query = "vaultkit_standby_host=\(host)&vaultkit_standby_port=\(port)"
        let withStandby = base + (base.contains("?") ? "&" : "?") + query + fragment
        let get = try postgres.cli.run(["get", "s", "a", "--vault", withStandby], vault: false)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == "x\n")
        let bad = try postgres.cli.run(["get", "s", "a", "--vault", withStandby.replacingOccurrences(of: "#", with: "&vaultkit_standby_max_staleness_ms=0#")], vault: false)
        #expect(bad.status == 2, "\(bad.stderr)")
        #expect(!bad.stderr.contains("vaultkit_standby"), "\(bad.stderr)")
    }

    @Test func passwdChangesThePassphraseInPostgres() throws {
        let postgres = try PostgresCLI()
        try #require(postgres.run(["init"] + CLI.cheapKDF).status == 0)
        try #require(postgres.run(["set", "s", "a"], stdin: "x\n").status == 0)
        let passwd = try postgres.run(["passwd"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "new one"])
        #expect(passwd.status == 0, "\(passwd.stderr)")
        #expect(try postgres.run(["get", "s", "a"]).status == 1)
        #expect(try postgres.run(["get", "s", "a"], env: ["VAULT_PASSPHRASE": "new one"]).stdout == "x\n")
    }
}
