import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// The rollback guard: an older whole file, or a `-wal` that lost its last commits, is
/// `rolledBack` when opened, where the file alone could not tell (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool) struct RollbackGuardTests {
    static func guardDirectory(_ label: String = #function) -> RollbackGuard {
        RollbackGuard(directory: TestPaths.temporaryDirectory(label) + "/rollback")
    }

    static func open(_ path: String, _ key: VaultKey, _ rollbackGuard: RollbackGuard, accepting: Bool = false) throws -> Vault {
        let vault = try Vault.open(at: path, key: key)
        try vault.useRollbackGuard(rollbackGuard, acceptingCurrentState: accepting)
        return vault
    }

    @Test func anOlderCopyOfTheWholeFileIsRolledBack() throws {
        let rollbackGuard = Self.guardDirectory()
        let (first, path, key) = try Fixtures.keyVault()
        try first.useRollbackGuard(rollbackGuard)
        try first.set("old", service: "api", account: "alice")
        first.close()
        let oldCopy = Fixtures.bytes(of: path)

        let second = try Self.open(path, key, rollbackGuard)
        try second.set("new", service: "api", account: "alice")
        try second.delete(service: "api", account: "alice")
        second.close()

        Fixtures.write(oldCopy, to: path)
        // Without the guard the old copy is self-consistent: this is what the guard adds.
        #expect(try Vault.open(at: path, key: key).verify() == 1)
        #expect(throws: VaultError.rolledBack(path: path, seenGeneration: 3, fileGeneration: 1)) { try Self.open(path, key, rollbackGuard) }

        // Accepted on purpose (a restored backup), it is the newest state from then on.
        let restored = try Self.open(path, key, rollbackGuard, accepting: true)
        #expect(try restored.string(service: "api", account: "alice") == "old")
        restored.close()
        _ = try Self.open(path, key, rollbackGuard)
    }

    enum Damage: String, CaseIterable { case truncated, flippedByte, zeroed, badHeader }

    /// Ten commits still only in the `-wal` (the writer crashed before a checkpoint), and
    /// the `-wal` damaged: SQLite opens the last state it can read, ten commits earlier.
    @Test(arguments: Damage.allCases)
    func commitsLostFromTheLogAreRolledBack(damage: Damage) throws {
        let rollbackGuard = Self.guardDirectory()
        let (writer, path, key) = try Fixtures.keyVault()
        try writer.useRollbackGuard(rollbackGuard)
        for index in 0..<5 { try writer.set("v\(index)", service: "s", account: "early\(index)") }
        writer.close()  // checkpointed into the main file
        let crashed = try Self.open(path, key, rollbackGuard)
        for index in 0..<10 { try crashed.set("v\(index)", service: "s", account: "late\(index)") }
        // The crash image: the files as they are while the writer still has them open.
        let image = TestPaths.temporaryDirectory("image") + "/test.vault"
        for suffix in ["", "-wal"] { Fixtures.write(Fixtures.bytes(of: path + suffix), to: image + suffix) }
        crashed.close()

        var wal = Fixtures.bytes(of: image + "-wal")
        #expect(wal.count > 32 + 24 + 4096)
        switch damage {
        case .truncated: wal = Array(wal.prefix(32 + 24 + 4096 + 100))
        case .flippedByte: wal[32 + 24 + 10] ^= 0x01
        case .zeroed: wal = [UInt8](repeating: 0, count: wal.count)
        case .badHeader: wal[0] ^= 0xFF
        }
        Fixtures.write(wal, to: image + "-wal")

        // Self-consistent without the guard: the lost commits are simply not there.
        let unguarded = try Vault.open(at: image, key: key)
        #expect(try unguarded.items().count < 15)
        #expect(try unguarded.verify() < 15)
        unguarded.close()
        #expect(throws: VaultError.self) { try Self.open(image, key, rollbackGuard) }
        do {
            _ = try Self.open(image, key, rollbackGuard)
        } catch let error as VaultError {
            guard error.code == .rolledBack, let seen = error.seenGeneration, let found = error.fileGeneration
            else { Issue.record("\(error)"); return }
            #expect(seen == 15 && found < 15)
        }
    }

    /// No false alarm: several handles and processes writing in turn, re-keying and
    /// changing the passphrase, each recording; every open agrees with the record.
    @Test func interleavedWritersNeverTripTheGuard() throws {
        let rollbackGuard = Self.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        let other = try Self.open(path, key, rollbackGuard)
        for round in 0..<20 {
            try (round.isMultiple(of: 2) ? vault : other).set("v\(round)", service: "s", account: "a\(round % 5)")
            if round == 7 { try vault.rekey() }
            if round == 13 { try other.changeKey(to: key) }
        }
        try vault.batch { batch in for index in 0..<10 { try batch.set("b", service: "batch", account: "\(index)") } }
        // A child process without the guard writes too (5 items and "shared/last"): the
        // record lags, never leads.
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let result = try ChildProcess.run(TestPaths.executable("vault-test-writer"), ["write", path, keyFile, "child", "5"])
        #expect(result.status == 0)
        vault.close()
        other.close()
        let reopened = try Self.open(path, key, rollbackGuard)
        let items = try reopened.items()
        #expect(items.count == 21, "\(items.map { "\($0.service)/\($0.account)" })")
        #expect(try reopened.verify() == items.count)
    }

    /// The generation is authenticated: lowered or raised by hand, the header's tag fails.
    @Test func theGenerationCannotBeEditedWithoutTheKey() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("x", service: "s", account: "a")
        vault.close()
        RawDatabase(path).execute("UPDATE vault_generation SET generation = generation + 100")
        let reopened = try Vault.open(at: path, key: key)
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) { try reopened.verify() }
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try reopened.useRollbackGuard(Self.guardDirectory())
        }
    }

    /// A record file others may read or write is refused, like the vault itself.
    @Test func aLooseRecordFileIsRefused() throws {
        let rollbackGuard = Self.guardDirectory()
        let (vault, _, _) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        let record = try #require(try FileManager.default.contentsOfDirectory(atPath: rollbackGuard.directory).first)
        let recordPath = rollbackGuard.directory + "/" + record
        #expect(Fixtures.mode(of: recordPath) == 0o600)
        chmod(recordPath, 0o644)
        #expect(throws: VaultError.insecurePermissions(path: recordPath, mode: UInt32(S_IFREG) | 0o644)) { try vault.useRollbackGuard(rollbackGuard) }
    }
}
