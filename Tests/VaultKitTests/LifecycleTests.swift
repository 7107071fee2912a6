import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Creating, opening, unlocking and re-keying vault files, and the errors on the way.
@Suite(.offCooperativePool) struct LifecycleTests {
    @Test func itemsPersistAcrossCloseAndReopenWithPassphrase() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("persisted", service: "s", account: "a", label: "L")
        vault.close()
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(try reopened.string(service: "s", account: "a") == "persisted")
        #expect(try reopened.item(service: "s", account: "a").label == "L")
    }

    @Test func itemsPersistAcrossCloseAndReopenWithRawKey() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("persisted", service: "s", account: "a")
        vault.close()
        #expect(try Vault.open(at: path, key: key).string(service: "s", account: "a") == "persisted")
    }

    @Test func wrongPassphraseAndWrongKeyAreTypedErrors() throws {
        let (_, path) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "Correct horse") }
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "") }
        let (_, keyPath, _) = try Fixtures.keyVault()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: keyPath, key: VaultKey.random()) }
        // Unlocking with the other kind of credential names the mix-up.
        #expect(throws: VaultError.self) { try Vault.open(at: keyPath, passphrase: "x") }
        #expect(throws: VaultError.self) { try Vault.open(at: path, key: VaultKey.random()) }
    }

    @Test func changePassphraseThenOldFailsAndNewWorks() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("kept", service: "s", account: "a")
        let before = Fixtures.bytes(of: path)
        try vault.changePassphrase(to: "new passphrase", kdf: testKDF)
        try vault.set("after", service: "s", account: "b")
        vault.close()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "correct horse") }
        let reopened = try Vault.open(at: path, passphrase: "new passphrase")
        #expect(try reopened.string(service: "s", account: "a") == "kept")
        #expect(try reopened.string(service: "s", account: "b") == "after")
        #expect(!before.isEmpty)
    }

    @Test func passphraseChangeRewrapsOnlyTheMasterKey() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        for index in 0..<20 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
        let rowsBefore = RawDatabase(path).rows("SELECT lookup_id, nonce, sealed FROM vault_items ORDER BY lookup_id")
        try vault.changePassphrase(to: "other", kdf: testKDF)
        let rowsAfter = RawDatabase(path).rows("SELECT lookup_id, nonce, sealed FROM vault_items ORDER BY lookup_id")
        #expect(rowsBefore == rowsAfter)
    }

    @Test func theRecordedKDFCostIsReadable() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        #expect(try vault.kdfParameters == testKDF)
        try vault.changeKey(to: VaultKey.random())
        #expect(try vault.kdfParameters == nil)
    }

    @Test func switchingBetweenPassphraseAndKey() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("v", service: "s", account: "a")
        let key = VaultKey.random()
        try vault.changeKey(to: key)
        vault.close()
        #expect(throws: VaultError.self) { try Vault.open(at: path, passphrase: "correct horse") }
        let byKey = try Vault.open(at: path, key: key)
        #expect(try byKey.string(service: "s", account: "a") == "v")
        try byKey.changePassphrase(to: "back", kdf: testKDF)
        byKey.close()
        #expect(try Vault.open(at: path, passphrase: "back").string(service: "s", account: "a") == "v")
    }

    @Test func rekeyResealsEveryItemAndKeepsThem() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        for index in 0..<50 { try vault.set("v\(index)", service: "s\(index % 3)", account: "a\(index)", label: "l\(index)") }
        let rowsBefore = Set(RawDatabase(path).rows("SELECT lookup_id, sealed FROM vault_items").map { $0[0] + $0[1] })
        try vault.rekey()
        let rowsAfter = RawDatabase(path).rows("SELECT lookup_id, sealed FROM vault_items").map { $0[0] + $0[1] }
        #expect(rowsAfter.count == 50)
        #expect(rowsBefore.isDisjoint(with: rowsAfter))
        #expect(try vault.string(service: "s1", account: "a1") == "v1")
        vault.close()
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(try reopened.items().count == 50)
        #expect(try reopened.item(service: "s2", account: "a2").label == "l2")
        #expect(try reopened.items(service: "s0").count == 17)
    }

    @Test func anotherHandleFollowsARekey() throws {
        let (first, path) = try Fixtures.passphraseVault()
        try first.set("v", service: "s", account: "a")
        let second = try Vault.open(at: path, passphrase: "correct horse")
        try first.rekey()
        #expect(try second.string(service: "s", account: "a") == "v")
        try second.set("w", service: "s", account: "b")
        #expect(try first.string(service: "s", account: "b") == "w")
    }

    @Test func createOverAnExistingFileFailsAndLeavesItAlone() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("v", service: "s", account: "a")
        vault.close()
        let before = Fixtures.bytes(of: path)
        #expect(throws: VaultError.vaultAlreadyExists(path: path)) { try Vault.create(at: path, passphrase: "x", kdf: testKDF) }
        #expect(throws: VaultError.vaultAlreadyExists(path: path)) { try Vault.create(at: path, key: VaultKey.random()) }
        #expect(Fixtures.bytes(of: path) == before)
        let other = TestPaths.temporaryDirectory() + "/plain.txt"
        Fixtures.write(Array("not mine".utf8), to: other)
        #expect(throws: VaultError.vaultAlreadyExists(path: other)) { try Vault.create(at: other, key: VaultKey.random()) }
        #expect(Fixtures.bytes(of: other) == Array("not mine".utf8))
    }

    @Test func openingAMissingFileIsVaultNotFound() {
        let path = TestPaths.temporaryDirectory() + "/missing.vault"
        #expect(throws: VaultError.vaultNotFound(path: path)) { try Vault.open(at: path, passphrase: "x") }
    }

    @Test func filesThatAreNotVaultsAreNotAVault() throws {
        let directory = TestPaths.temporaryDirectory()
        let random = directory + "/random.bin"
        Fixtures.write((0..<8192).map { _ in UInt8.random(in: 0...255) }, to: random)
        let text = directory + "/text.txt"
        Fixtures.write(Array(String(repeating: "hello vault\n", count: 500).utf8), to: text)
        let empty = directory + "/empty"
        Fixtures.write([], to: empty)
        let otherDatabase = directory + "/other.sqlite"
        Fixtures.write([], to: otherDatabase)
        RawDatabase(otherDatabase).execute("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        for path in [random, text, empty, otherDatabase] {
            #expect(throws: VaultError.notAVault(path: path)) { try Vault.open(at: path, key: VaultKey.random()) }
        }
        #expect(throws: VaultError.io(path: directory, errno: EISDIR)) { try Vault.open(at: directory, key: VaultKey.random()) }
    }

    @Test func truncatedVaultsGiveATypedErrorAtEveryLength() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        for index in 0..<30 { try vault.set(String(repeating: "x", count: 200), service: "s", account: "a\(index)") }
        vault.close()
        let bytes = Fixtures.bytes(of: path)
        let truncated = path + ".truncated"
        for length in stride(from: 0, to: bytes.count, by: 509) {
            Fixtures.write(Array(bytes[..<length]), to: truncated)
            do {
                let opened = try Vault.open(at: truncated, key: key)
                _ = try opened.items()
                Issue.record("a vault truncated to \(length) of \(bytes.count) bytes read back as complete")
            } catch {
                switch error.code {
                case .notAVault, .corrupted, .tampered: break
                default: Issue.record("unexpected \(error) at length \(length)")
                }
            }
            FileSystemCleanup.removeSideFiles(truncated)
        }
    }

    @Test func aNewerFormatVersionIsRefused() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        vault.close()
        RawDatabase(path).execute("UPDATE vault_header SET format_version = 99")
        #expect(throws: VaultError.unsupportedFormatVersion(99)) { try Vault.open(at: path, key: key) }
    }

    @Test func filesAre0600AndNewDirectories0700() throws {
        let root = TestPaths.temporaryDirectory()
        let path = root + "/new/nested/test.vault"
        let vault = try Vault.create(at: path, key: VaultKey.random())
        try vault.set("v", service: "s", account: "a")
        #expect(Fixtures.mode(of: path) == 0o600)
        #expect(Fixtures.mode(of: root + "/new") == 0o700)
        #expect(Fixtures.mode(of: root + "/new/nested") == 0o700)
        for side in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + side) {
            #expect(Fixtures.mode(of: path + side) == 0o600)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root + "/new/nested").filter { $0.hasSuffix(".creating") }
        #expect(leftovers.isEmpty)
    }

    @Test func aVaultWritableByOthersIsRefused() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        vault.close()
        chmod(path, 0o666)
        #expect(throws: VaultError.insecurePermissions(path: path, mode: UInt32(S_IFREG) | 0o666)) { try Vault.open(at: path, key: key) }
        chmod(path, 0o600)
        _ = try Vault.open(at: path, key: key)
    }

    @Test func rawKeysMustBe32Bytes() {
        #expect(throws: VaultError.self) { try VaultKey(Data(count: 31)) }
        #expect(throws: VaultError.self) { try VaultKey(Data(count: 33)) }
        #expect(throws: Never.self) { try VaultKey(Data(count: 32)) }
    }

    @Test func kdfLimitsAreValidatedAndRecordedInTheFile() throws {
        #expect(throws: VaultError.self) { try KDFParameters(opsLimit: 0, memoryLimit: 8192) }
        #expect(throws: VaultError.self) { try KDFParameters(opsLimit: 1, memoryLimit: 1024) }
        let path = Fixtures.vaultPath()
        let kdf = try KDFParameters(opsLimit: 2, memoryLimit: 16 * 1024)
        _ = try Vault.create(at: path, passphrase: "p", kdf: kdf)
        let database = RawDatabase(path)
        #expect(database.integer("SELECT kdf_opslimit FROM vault_header") == 2)
        #expect(database.integer("SELECT kdf_memlimit FROM vault_header") == Int64(16 * 1024))
        #expect(database.integer("SELECT count(*) FROM vault_header WHERE kdf_algorithm = 'argon2id13'") == 1)
    }
}

enum FileSystemCleanup {
    static func removeSideFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}

/// Paths the operating system refuses give `io` errors with the errno, and create nothing.
@Suite(.offCooperativePool) struct PathErrorTests {
    @Test func aPathBelowARegularFileIsAnIOError() throws {
        let directory = TestPaths.temporaryDirectory()
        let file = directory + "/plain"
        Fixtures.write([1, 2, 3], to: file)
        #expect(throws: VaultError.io(path: file, errno: ENOTDIR)) { try Vault.create(at: file + "/x.vault", key: VaultKey.random()) }
        #expect(throws: VaultError.io(path: file + "/x.vault", errno: ENOTDIR)) { try Vault.open(at: file + "/x.vault", key: VaultKey.random()) }
        #expect(Fixtures.bytes(of: file) == [1, 2, 3])
    }

    @Test func aReadOnlyDirectoryIsAnIOError() throws {
        // Root ignores directory permissions; a read-only bind is not available in tests,
        // so /proc (read-only for everyone) stands in.
        #expect(throws: VaultError.self) { try Vault.create(at: "/proc/vaultkit-test.vault", key: VaultKey.random()) }
    }
}
