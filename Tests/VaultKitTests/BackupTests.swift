import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// `backup(to:)`: a consistent, verified, private copy, including commits that are
/// still only in the `-wal` (which a copy of the main file alone loses).
@Suite(.offCooperativePool) struct BackupTests {
    @Test func aBackupHoldsEveryCommitIncludingThoseStillInTheLog() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        for index in 0..<10 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
        #expect((FileManager.default.fileSize(path + "-wal") ?? 0) > 0)

        // What `cp` of the main file alone gives while the vault is open: not these items.
        let plainCopy = TestPaths.temporaryDirectory("plain-copy") + "/copy.vault"
        Fixtures.write(Fixtures.bytes(of: path), to: plainCopy)
        let fromPlainCopy = (try? Vault.open(at: plainCopy, passphrase: "correct horse").items().count) ?? 0
        #expect(fromPlainCopy < 10)

        let destination = TestPaths.temporaryDirectory("backup") + "/nested/backup.vault"
        #expect(try vault.backup(to: destination) == 10)
        #expect(Fixtures.mode(of: destination) == 0o600)
        #expect(Fixtures.mode(of: (destination as NSString).deletingLastPathComponent) == 0o700)
        vault.close()

        let restored = try Vault.open(at: destination, passphrase: "correct horse")
        #expect(try restored.verify() == 10)
        #expect(try restored.string(service: "s", account: "a9") == "v9")
        // An independent vault from then on.
        try restored.set("only in the copy", service: "s", account: "new")
        #expect(try Vault.open(at: path, passphrase: "correct horse").contains(service: "s", account: "new") == false)
    }

    @Test func aBackupNeverOverwrites() throws {
        let (vault, _, _) = try Fixtures.keyVault()
        let destination = TestPaths.temporaryDirectory("backup") + "/existing"
        Fixtures.write([1, 2, 3], to: destination)
        #expect(throws: VaultError.vaultAlreadyExists(path: destination)) { try vault.backup(to: destination) }
        #expect(Fixtures.bytes(of: destination) == [1, 2, 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: (destination as NSString).deletingLastPathComponent) == ["existing"])
    }

    /// Another process keeps writing during the backup: the copy is one snapshot that
    /// verifies, holding at least what was committed before it started.
    @Test func aBackupWhileAnotherProcessWritesIsConsistent() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        for index in 0..<200 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let writer = try ChildProcess(TestPaths.executable("vault-test-writer"), ["write", path, keyFile, "0", "2000"])
        defer { writer.send(SIGKILL); _ = writer.wait(timeout: .seconds(30)) }
        #expect(writer.waitForOutput(containing: "ack 20", timeout: .seconds(60)))
        for round in 0..<5 {
            let destination = TestPaths.temporaryDirectory("backup") + "/copy-\(round).vault"
            let count = try vault.backup(to: destination)
            #expect(count >= 200)
            #expect(try Vault.open(at: destination, key: key).verify() == count)
        }
    }
}
