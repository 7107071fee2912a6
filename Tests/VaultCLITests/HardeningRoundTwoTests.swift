import Foundation
import Testing
import TestSupport
import TestTraits
#if canImport(Glibc)
import Glibc
#endif

/// The CLI side of the second hardening round: a file size limit, read-only vaults,
/// and `vault backup`.
@Suite(.offCooperativePool) struct HardeningRoundTwoTests {
    /// `ulimit -f` used to kill `vault set` with SIGXFSZ (status 153, no message).
    @Test func aFileSizeLimitIsOneErrorLineAndLosesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "before", "kept")
        var environment = ChildProcess.cleanEnvironment(cli.environment)
        environment["VAULT"] = CLI.executable
        environment["VAULT_PATH"] = cli.vaultPath
        // A 1 MiB secret against a limit of 64 blocks (32 KiB in dash's 512-byte blocks).
        let result = try ChildProcess.run("/bin/sh", ["-c", #"head -c 1048576 /dev/zero | tr '\0' x | (ulimit -f 64; exec "$VAULT" set svc big)"#],
                                          environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.isOneErrorLine)
        #expect(result.stderr.hasSuffix(": file too large\n"), "\(result.stderr)")
        #expect(try cli.run("get", "svc", "before").stdout == "kept\n")
        #expect(try cli.run("get", "svc", "big").status == 44)
        #expect(try cli.run("verify").status == 0)
    }

    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), "needs root and chattr(1)"))
    func anImmutableVaultReadsAndRefusesWritesWithOneAccurateLine() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "s3cr3t")
        #expect(try ChildProcess.run("/usr/bin/chattr", ["+i", cli.vaultPath]).status == 0)
        defer { _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", cli.vaultPath]) }
        #expect(try cli.run("get", "svc", "acct").stdout == "s3cr3t\n")
        #expect(try cli.run("list").stdout == "svc\tacct\n")
        #expect(try cli.run("verify").status == 0)
        let write = try cli.run("set", "svc", "other", stdin: "x\n")
        #expect(write.status == 1)
        #expect(write.stderr == "vault: \(cli.vaultPath): operation not permitted\n")
    }

    @Test func backupWritesAVerifiedCopyThatOpensWithTheSamePassphrase() throws {
        let cli = CLI()
        try cli.initVault()
        for index in 0..<5 { try cli.set("svc", "a\(index)", "v\(index)") }
        let destination = cli.directory + "/backups/copy.vault"
        let result = try cli.run("backup", destination)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
        #expect(try cli.run(["get", "svc", "a4", "--vault", destination], vault: false).stdout == "v4\n")
        let again = try cli.run("backup", destination)
        #expect(again.status == 1)
        #expect(again.stderr == "vault: a file already exists at \(destination); refusing to overwrite it\n")
    }

    /// A failed backup names the destination the user gave, not the hidden file the copy
    /// was being built in, and leaves nothing behind.
    @Test func aFailedBackupNamesItsDestinationAndLeavesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "big", String(repeating: "x", count: 200_000))
        let directory = cli.directory + "/backups"
        mkdir(directory, 0o700)
        let destination = directory + "/copy.vault"
        var environment = ChildProcess.cleanEnvironment(cli.environment.merging(["XDG_STATE_HOME": cli.directory + "/state"]) { $1 })
        environment["VAULT"] = CLI.executable
        environment["VAULT_PATH"] = cli.vaultPath
        // 64 blocks (32 KiB in dash's 512-byte blocks): the vault opens, its copy cannot be written.
        let result = try ChildProcess.run("/bin/sh", ["-c", #"ulimit -f 64; exec "$VAULT" backup "$1""#, "sh", destination], environment: environment)
        #expect(result.status == 1)
        #expect(result.stderr == "vault: \(destination): file too large\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    /// A backup killed halfway leaves its hidden file and SQLite's journal beside the
    /// destination; the next backup there removes them, but never the file of a backup
    /// still running (which holds it locked).
    @Test func theNextBackupRemovesWhatAKilledOneLeftButNotALiveOnesFile() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "v")
        let directory = cli.directory + "/backups"
        mkdir(directory, 0o700)
        let killed = directory + "/.copy.vault.1f2e3d4c5b6a7988.creating"
        let live = directory + "/.copy.vault.aabbccdd.creating"
        let unrelated = directory + "/.other.vault.1f2e3d4c.creating"
        for path in [killed, killed + "-journal", live, unrelated] { try writePrivateFile(path, Data("partial".utf8)) }
        let liveFD = open(live, O_RDONLY)
        defer { close(liveFD) }
        #expect(flock(liveFD, LOCK_EX) == 0)
        let result = try cli.run("backup", directory + "/copy.vault")
        #expect(result.status == 0, "\(result.stderr)")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        #expect(left == ["copy.vault", ".copy.vault.aabbccdd.creating", ".other.vault.1f2e3d4c.creating"])
    }

    /// A vault directly in /tmp is refused; the advice is a private directory, since
    /// `chmod go-w /tmp` is neither possible nor wanted.
    @Test func aVaultInASharedDirectoryIsToldToMoveToAPrivateOne() throws {
        var info = stat()
        guard stat("/tmp", &info) == 0, info.st_mode & 0o1777 == 0o1777 else { return }
        let path = "/tmp/vaultkit-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).vault"
        defer { unlink(path) }
        let cli = CLI()
        let result = try cli.run(["init", "--vault", path] + CLI.cheapKDF, vault: false)
        #expect(result.status == 1)
        #expect(result.stderr == "vault: refusing the vault's directory /tmp: permissions 1777 make it a shared directory others can create files in; keep the vault in a directory of your own (mkdir -m 700 DIR)\n")
        #expect(access(path, F_OK) != 0)
    }

    /// The CLI keeps rollback records by default: an older copy put in the vault's place
    /// is refused until it is accepted on purpose.
    @Test func anOlderCopyIsRefusedUntilAccepted() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "old")
        let oldCopy = try Data(contentsOf: URL(fileURLWithPath: cli.vaultPath))
        try cli.set("svc", "acct", "new")
        #expect(try cli.run("delete", "svc", "acct").status == 0)
        try writePrivateFile(cli.vaultPath, oldCopy)

        let refused = try cli.run("get", "svc", "acct")
        #expect(refused.status == 1)
        #expect(refused.isOneErrorLine)
        #expect(refused.stderr.hasPrefix("vault: \(cli.vaultPath) is older than a state this user has seen (generation 1, seen 3)"), "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("accept it once with --accept-rollback\n"))
        // Switched off, the file alone decides (and the record is left as it was).
        #expect(try cli.run(["get", "svc", "acct"], env: ["VAULT_ROLLBACK_GUARD": "off"]).stdout == "old\n")
        #expect(try cli.run("get", "svc", "acct").status == 1)
        #expect(try cli.run("get", "svc", "acct", "--accept-rollback").stdout == "old\n")
        #expect(try cli.run("get", "svc", "acct").stdout == "old\n")
    }

    /// Only the first line of a passphrase file counts, so a long file is fine; a first
    /// line over 64 KiB is not.
    @Test func aLongPassphraseFileIsReadToItsFirstLineOnly() throws {
        let cli = CLI()
        try cli.initVault()
        let file = cli.directory + "/pass"
        try writePrivateFile(file, Data(("correct horse\n" + String(repeating: "comment line\n", count: 10_000)).utf8))
        #expect(try cli.run(["list"], env: ["VAULT_PASSPHRASE_FILE": file], unset: ["VAULT_PASSPHRASE"]).status == 0)
        try writePrivateFile(file, Data(String(repeating: "x", count: 70_000).utf8))
        let tooLong = try cli.run(["list"], env: ["VAULT_PASSPHRASE_FILE": file], unset: ["VAULT_PASSPHRASE"])
        #expect(tooLong.status == 1)
        #expect(tooLong.stderr == "vault: cannot read the passphrase file \(file): file too large\n")
    }
}
