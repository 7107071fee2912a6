import Foundation
import Testing
import TestSupport
import TestTraits

/// `git-credential-vault` driven by a real `git credential fill/approve/reject`, and its
/// protocol details (expiry, refresh tokens, the authtype capability) spoken directly.
/// git's own suite for helpers, t0303, runs from scripts/test-git-credential.sh.
@Suite(.offCooperativePool) struct GitCredentialTests {
    static let helper = TestPaths.executable("git-credential-vault")

    /// A git with no user or system configuration, no terminal prompts, and the package's
    /// build products first on PATH (where git finds `git-credential-vault`).
    struct Git {
        let cli: CLI
        var environment: [String: String] {
            let path = TestPaths.productsDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            return ChildProcess.cleanEnvironment(cli.environment.merging([
                "HOME": cli.directory, "XDG_CONFIG_HOME": cli.directory, "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_TERMINAL_PROMPT": "0", "VAULT_PATH": cli.vaultPath, "PATH": path,
            ]) { $1 }).filter { $0.key != "GIT_ASKPASS" && $0.key != "SSH_ASKPASS" }
        }

        init(_ label: String = #function) throws {
            cli = CLI(label)
            try cli.initVault()
        }

        func git(_ arguments: [String], _ input: String) throws -> ProcessResult {
            try ChildProcess.run(Self.gitExecutable, ["-c", "credential.helper=vault"] + arguments,
                                 environment: environment, standardInput: Data(input.utf8), timeout: .seconds(60))
        }

        /// The helper alone, as git runs it.
        func helper(_ operation: String, _ input: String, environment extra: [String: String] = [:]) throws -> ProcessResult {
            try ChildProcess.run(GitCredentialTests.helper, [operation], environment: environment.merging(extra) { $1 },
                                 standardInput: Data(input.utf8), timeout: .seconds(60))
        }

        static let gitExecutable: String = {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            return path.split(separator: ":").map { "\($0)/git" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/git"
        }()
    }

    @Test func approveThenFillGivesThePasswordBackFromTheVault() throws {
        let git = try Git()
        let approve = try git.git(["credential", "approve"], "protocol=https\nhost=example.com\nusername=alice\npassword=p4ss-w0rd\n")
        #expect(approve.status == 0, "\(approve.stderr)")
        #expect(approve.stdout.isEmpty && !approve.stderr.contains("p4ss-w0rd"))
        let fill = try git.git(["credential", "fill"], "protocol=https\nhost=example.com\n")
        #expect(fill.status == 0, "\(fill.stderr)")
        #expect(fill.stdout == "protocol=https\nhost=example.com\nusername=alice\npassword=p4ss-w0rd\n")
        #expect(!fill.stderr.contains("p4ss-w0rd"))
        // An ordinary item: service git:PROTOCOL://HOST, account = username.
        #expect(try git.cli.run("get", "git:https://example.com", "alice").stdout == "p4ss-w0rd\n")
        #expect(try git.cli.run("list").stdout == "git:https://example.com\talice\n")
    }

    @Test func rejectErasesTheCredentialSoGitWouldPrompt() throws {
        let git = try Git()
        _ = try git.git(["credential", "approve"], "protocol=https\nhost=example.com\nusername=alice\npassword=one\n")
        _ = try git.git(["credential", "approve"], "protocol=https\nhost=other.example\nusername=alice\npassword=two\n")
        let reject = try git.git(["credential", "reject"], "protocol=https\nhost=example.com\nusername=alice\n")
        #expect(reject.status == 0, "\(reject.stderr)")
        let fill = try git.git(["credential", "fill"], "protocol=https\nhost=example.com\n")
        #expect(fill.status != 0)
        #expect(fill.stderr.contains("terminal prompts disabled"), "\(fill.stderr)")
        // Only the rejected host went.
        #expect(try git.cli.run("list").stdout == "git:https://other.example\talice\n")
    }

    @Test func withUseHttpPathEachRepositoryIsItsOwnItem() throws {
        let git = try Git()
        let config = ["-c", "credential.useHttpPath=true"]
        _ = try git.git(config + ["credential", "approve"], "protocol=https\nhost=example.com\npath=org/repo.git\nusername=bot\npassword=repo-token\n")
        let other = try git.git(config + ["credential", "fill"], "protocol=https\nhost=example.com\npath=org/other.git\n")
        #expect(other.status != 0)
        let same = try git.git(config + ["credential", "fill"], "url=https://example.com/org/repo.git\n")
        #expect(same.stdout.contains("username=bot\npassword=repo-token\n"), "\(same.stderr)")
        #expect(try git.cli.run("get", "git:https://example.com/org/repo.git", "bot").stdout == "repo-token\n")
        // An erase without a path, as git sends it without useHttpPath, reaches every path of the host.
        _ = try git.git(["credential", "reject"], "protocol=https\nhost=example.com\n")
        #expect(try git.cli.run("list").stdout.isEmpty)
    }

    @Test func withSeveralUsersTheUsernameChoosesAndNoneGivesTheLatest() throws {
        let git = try Git()
        _ = try git.helper("store", "protocol=https\nhost=example.com\nusername=first\npassword=1\n")
        _ = try git.helper("store", "protocol=https\nhost=example.com\nusername=second\npassword=2\n")
        #expect(try git.helper("get", "protocol=https\nhost=example.com\nusername=first\n").stdout == "username=first\npassword=1\n")
        #expect(try git.helper("get", "protocol=https\nhost=example.com\n").stdout == "username=second\npassword=2\n")
        #expect(try git.helper("get", "protocol=https\nhost=example.com\nusername=third\n").stdout.isEmpty)
    }

    @Test func unknownAttributesAndOperationsAreIgnored() throws {
        let git = try Git()
        let store = try git.helper("store", "protocol=https\nhost=example.com\nwwwauth[]=Basic realm=\"x\"\nfuture_thing=1\nusername=alice\npassword=pw\n\nafter=blank\n")
        #expect(store.status == 0, "\(store.stderr)")
        let get = try git.helper("get", "protocol=https\nhost=example.com\nstate[]=x\n")
        #expect(get.stdout == "username=alice\npassword=pw\n")
        // An operation from a future git: nothing happens, even with no vault to open.
        let future = try git.helper("frobnicate", "protocol=https\nhost=example.com\n", environment: ["VAULT_PATH": git.cli.directory + "/absent.vault"])
        #expect(future.status == 0 && future.stdout.isEmpty && future.stderr.isEmpty)
    }

    /// A message ends at a blank line even when the input stays open, as when someone
    /// types a request by hand.
    @Test func aBlankLineEndsTheRequest() throws {
        let git = try Git()
        try git.cli.set("git:https://example.com", "alice", "pw")
        let helper = try ChildProcess(GitCredentialTests.helper, ["get"], environment: git.environment, standardInput: nil)
        try helper.write(Data("protocol=https\nhost=example.com\n\n".utf8))
        #expect(helper.waitForOutput(containing: "password=pw\n", timeout: .seconds(60)))
        helper.closeStandardInput()
        let result = helper.wait()
        #expect(result.status == 0 && result.stdout == "username=alice\npassword=pw\n")
    }

    @Test func expiredPasswordsAreNeitherStoredNorReturned() throws {
        let git = try Git()
        let future = Int(Date().timeIntervalSince1970) + 3600
        _ = try git.helper("store", "protocol=https\nhost=a.example\nusername=u\npassword=fresh\npassword_expiry_utc=\(future)\n")
        #expect(try git.helper("get", "protocol=https\nhost=a.example\n").stdout == "username=u\npassword=fresh\npassword_expiry_utc=\(future)\n")
        _ = try git.helper("store", "protocol=https\nhost=b.example\nusername=u\npassword=stale\npassword_expiry_utc=1000\n")
        #expect(try git.cli.run("list").stdout == "git:https://a.example\tu\n")
        // Stored before it expired, read after: not returned.
        try git.cli.run(["set", "git:https://c.example", "u", "--generic", "password_expiry_utc=1000\n"], stdin: Data("old\n".utf8))
        #expect(try git.helper("get", "protocol=https\nhost=c.example\n").stdout.isEmpty)
    }

    @Test func oauthRefreshTokensAreKeptBesideThePasswordAndErasedWithIt() throws {
        let git = try Git()
        _ = try git.helper("store", "protocol=https\nhost=forge.example\nusername=alice\npassword=access\noauth_refresh_token=refresh-me\n")
        #expect(try git.helper("get", "protocol=https\nhost=forge.example\n").stdout == "username=alice\npassword=access\noauth_refresh_token=refresh-me\n")
        #expect(try git.cli.run("list").stdout == "git-refresh-token:https://forge.example\talice\ngit:https://forge.example\talice\n")
        // Newer git sends the password it rejects: a different stored one stays.
        _ = try git.helper("erase", "protocol=https\nhost=forge.example\nusername=alice\npassword=not-this-one\n")
        #expect(try git.cli.run("list").stdout.contains("git:https://forge.example\talice"))
        _ = try git.helper("erase", "protocol=https\nhost=forge.example\nusername=alice\npassword=access\n")
        #expect(try git.cli.run("list").stdout.isEmpty)
    }

    @Test func authtypeCredentialsGoOnlyToAGitThatAnnouncesTheCapability() throws {
        let git = try Git()
        let store = try git.helper("store", "capability[]=authtype\nprotocol=https\nhost=api.example\nauthtype=Bearer\ncredential=b3arer\n")
        #expect(store.status == 0, "\(store.stderr)")
        #expect(try git.helper("get", "protocol=https\nhost=api.example\n").stdout.isEmpty)
        let get = try git.helper("get", "capability[]=authtype\nprotocol=https\nhost=api.example\n")
        #expect(get.stdout == "capability[]=authtype\nauthtype=Bearer\ncredential=b3arer\n")
        // Without the capability, a credential is not something to store.
        _ = try git.helper("store", "protocol=https\nhost=api2.example\nauthtype=Bearer\ncredential=x\n")
        #expect(try git.cli.run("list").stdout == "git:https://api.example\t\n")
    }

    /// git runs helpers with no terminal in CI and cron: the helper must fail at once (git
    /// then tries its next helper or prompt), never wait for a passphrase.
    @Test func withoutAPassphraseOrTerminalTheHelperFailsAtOnce() throws {
        let git = try Git()
        let result = try git.helper("get", "protocol=https\nhost=example.com\n", environment: ["VAULT_PASSPHRASE": ""])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no passphrase available"), "\(result.stderr)")
    }

    /// git's protocol is one attribute per line: a stored secret with a newline must not
    /// inject attributes into the answer.
    @Test func aSecretWithANewlineIsNotOffered() throws {
        let git = try Git()
        try git.cli.set("git:https://example.com", "alice", "line1\nhost=evil.example")
        let get = try git.helper("get", "protocol=https\nhost=example.com\n")
        #expect(get.status == 1)
        #expect(get.stdout.isEmpty)
        #expect(get.stderr == "vault: refusing the item for service 'git:https://example.com', account 'alice': its password holds a newline or NUL, which git's credential protocol cannot carry; nothing was written\n")
    }

    /// The injection attack: an item whose OAuth refresh token holds lines of its own.
    /// Written raw, they made `git credential fill` (which keeps the last value of each
    /// attribute) hand mallory's username and password to git.
    @Test func aRefreshTokenWithLinesCannotInjectCredentialsIntoGit() throws {
        let git = try Git()
        _ = try git.git(["credential", "approve"], "protocol=https\nhost=example.com\nusername=alice\npassword=alice-pw\n")
        try git.cli.set("git-refresh-token:https://example.com", "alice", "junk\nusername=mallory\npassword=attacker-pw")
        let fill = try git.git(["credential", "fill"], "protocol=https\nhost=example.com\n")
        #expect(!fill.stdout.contains("mallory") && !fill.stdout.contains("attacker-pw"), "\(fill.stdout)")
        #expect(!fill.stderr.contains("attacker-pw"))
        #expect(fill.stderr.contains("its oauth_refresh_token holds a newline or NUL"), "\(fill.stderr)")
        #expect(fill.status != 0, "git got no credential and may not prompt: \(fill.stdout)")
    }

    /// Every value the helper writes is checked, not only the password.
    @Test(arguments: [
        ("alice\nusername=mallory", "pw", "username"),
        ("alice", "pw\u{0}password=x", "password"),
    ])
    func anyValueWithANewlineOrNULIsRefused(account: String, secret: String, field: String) throws {
        let git = try Git()
        try git.cli.set("git:https://example.com", account, secret)
        let get = try git.helper("get", "protocol=https\nhost=example.com\n")
        #expect(get.status == 1)
        #expect(get.stdout.isEmpty)
        #expect(get.stderr.contains("its \(field) holds a newline or NUL"), "\(get.stderr)")
    }

    @Test func incompleteRequestsTouchNothing() throws {
        let git = try Git()
        // No host and no path, or no protocol: no item can be named.
        _ = try git.helper("store", "protocol=https\nusername=u\npassword=p\n")
        _ = try git.helper("store", "host=example.com\nusername=u\npassword=p\n")
        // No password: nothing git could use later.
        _ = try git.helper("store", "protocol=https\nhost=example.com\nusername=u\n")
        #expect(try git.cli.run("list").stdout.isEmpty)
    }
}

/// The helper programs exec the `vault` beside them, else the one on PATH, else say why not.
@Suite(.offCooperativePool) struct HelperLauncherTests {
    @Test(arguments: ["git-credential-vault", "docker-credential-vault"])
    func aHelperWithNoVaultBesideItOrOnPathSaysSo(helper: String) throws {
        let directory = TestPaths.temporaryDirectory()
        let copy = directory + "/" + helper
        try FileManager.default.copyItem(atPath: TestPaths.executable(helper), toPath: copy)
        let emptyDirectory = TestPaths.temporaryDirectory()
        let result = try ChildProcess.run(copy, ["get"], environment: ChildProcess.cleanEnvironment(["PATH": emptyDirectory]), standardInput: Data())
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("\(helper): cannot run 'vault': "), "\(result.stderr)")
        // With vault on PATH it is found there.
        let linked = try ChildProcess.run(copy, ["version"], environment: ChildProcess.cleanEnvironment(["PATH": TestPaths.productsDirectory]), standardInput: Data())
        if helper == "docker-credential-vault" {
            #expect(linked.status == 0 && linked.stdout.hasPrefix("docker-credential-vault"), "\(linked.stderr)")
        } else {
            #expect(linked.status == 0, "an unknown git operation is ignored: \(linked.stderr)")
        }
    }
}
