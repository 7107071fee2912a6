import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `vault backup`: a verified copy that opens with the same passphrase, a failure that
/// names the user's destination and leaves nothing, and the clean-up of a killed backup.
@Suite(.offCooperativePool) struct BackupCommandTests {
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
}
