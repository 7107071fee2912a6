import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// The rollback record itself (docs/FORMAT.md section 10): it survives a re-key, a
/// record that does not authenticate is refused rather than taken as missing, a
/// format-1 record is carried over, and a held vault compares every state another
/// process committed, as a fresh open would.
@Suite(.offCooperativePool) struct RollbackGuardRecordTests {
    static func open(_ path: String, _ key: VaultKey, _ rollbackGuard: RollbackGuard, accepting: Bool = false) throws -> Vault {
        try RollbackGuardTests.open(path, key, rollbackGuard, accepting: accepting)
    }

    static func recordPath(_ rollbackGuard: RollbackGuard) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: rollbackGuard.directory).filter { $0.count == 32 }
        return rollbackGuard.directory + "/" + (try #require(names.first))
    }

    enum Rekey: String, CaseIterable { case rekey, changeKeyThenRekey }

    /// A copy from before a re-key holds the old master key, under which a record MACed
    /// with the vault's key could not be checked: the guard went off. The record is
    /// under the user's own key now, and the generation counts on through the re-key.
    @Test(arguments: Rekey.allCases)
    func aCopyFromBeforeAReKeyIsRolledBack(rekey: Rekey) throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        try vault.set("v1-old-password", service: "db", account: "admin")
        vault.close()
        let oldCopy = Fixtures.bytes(of: path)

        let current = try Self.open(path, key, rollbackGuard)
        var newKey = key
        switch rekey {
        case .rekey:
            try current.rekey()
        case .changeKeyThenRekey:
            newKey = VaultKey.random()
            try current.changeKey(to: newKey)
            try current.rekey()
        }
        try current.set("v2-new-password", service: "db", account: "admin")
        current.close()
        _ = try Self.open(path, newKey, rollbackGuard)

        Fixtures.write(oldCopy, to: path)
        #expect(try Vault.open(at: path, key: key).verify() == 1)
        let seen: UInt64 = rekey == .rekey ? 3 : 4
        #expect(throws: VaultError.rolledBack(path: path, seenGeneration: seen, fileGeneration: 1)) { try Self.open(path, key, rollbackGuard) }
    }

    enum Damage: String, CaseIterable { case flippedMAC, flippedGeneration, flippedKeyCheck, retiredCountWithoutKeys, wrongMagic, shortened, lengthened, otherGuardKey }

    /// A record that exists and does not authenticate is refused, naming its path, until
    /// the vault's state is accepted on purpose; it is never overwritten as if missing.
    @Test(arguments: Damage.allCases)
    func aRecordThatDoesNotAuthenticateIsRefused(damage: Damage) throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        try vault.set("x", service: "s", account: "a")
        vault.close()
        let recordPath = try Self.recordPath(rollbackGuard)
        var record = Fixtures.bytes(of: recordPath)
        #expect(record.count == RollbackGuardFile.baseCount && Array(record.prefix(8)) == Array("VKRG0003".utf8))
        switch damage {
        case .flippedMAC: record[record.count - 1] ^= 1
        case .flippedGeneration: record[8] ^= 1
        case .flippedKeyCheck: record[48] ^= 1
        case .retiredCountWithoutKeys: record[80] = 1
        case .wrongMagic: record[7] = UInt8(ascii: "9")
        case .shortened: record.removeLast()
        case .lengthened: record.append(0)
        case .otherGuardKey:
            Fixtures.write(Sodium.randomBytes(count: 32), to: rollbackGuard.directory + "/key")
        }
        if damage != .otherGuardKey { Fixtures.write(record, to: recordPath) }
        let damaged = Fixtures.bytes(of: recordPath)

        #expect(throws: VaultError.rollbackRecordInvalid(path: recordPath)) { try Self.open(path, key, rollbackGuard) }
        #expect(Fixtures.bytes(of: recordPath) == damaged, "the refused record was left as it was")
        _ = try Self.open(path, key, rollbackGuard, accepting: true)
        #expect(try Self.open(path, key, rollbackGuard).string(service: "s", account: "a") == "x")
    }

    /// A record of the first format (MACed under the vault's manifest key) is read, and
    /// rewritten in the current format; one that does not authenticate is refused too.
    @Test func aFormatOneRecordIsCarriedOver() throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        let oldCopy = Fixtures.bytes(of: path)
        try vault.set("x", service: "s", account: "a")
        let formatOne = try vault.withUnlocked { (vault) throws(VaultError) -> [UInt8] in
            let state = try vault.verifiedState()
            var record = Array("VKRG0001".utf8)
            withUnsafeBytes(of: state.generation.littleEndian) { record += $0 }
            record += state.root.bytes
            record += vault.keys.rollbackGuardMAC(vaultID: state.vaultID, generation: state.generation, root: state.root).bytes
            return record
        }
        vault.close()
        let recordPath = try Self.recordPath(rollbackGuard)
        Fixtures.write(formatOne, to: recordPath)

        // Still counts: the copy from before the write is older than it.
        let current = Fixtures.bytes(of: path)
        Fixtures.write(oldCopy, to: path)
        #expect(throws: VaultError.rolledBack(path: path, seenGeneration: 1, fileGeneration: 0)) { try Self.open(path, key, rollbackGuard) }
        #expect(Fixtures.bytes(of: recordPath) == formatOne)
        Fixtures.write(current, to: path)
        _ = try Self.open(path, key, rollbackGuard)
        #expect(Array(Fixtures.bytes(of: recordPath).prefix(8)) == Array("VKRG0003".utf8))

        var forged = formatOne
        forged[79] ^= 1
        Fixtures.write(forged, to: recordPath)
        #expect(throws: VaultError.rollbackRecordInvalid(path: recordPath)) { try Self.open(path, key, rollbackGuard) }
    }

    enum HeldCall: String, CaseIterable { case get, getMissing, list, set, setNew, verify }

    /// A vault held open (the agent's case) whose rows are put back behind it, after it
    /// and another handle had seen later states: its next call is `rolledBack`, as a
    /// fresh open says, every time, and no write forks the history.
    @Test(arguments: HeldCall.allCases)
    func aHeldVaultNoticesRowsPutBackBehindIt(call: HeldCall) throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (held, path, key) = try Fixtures.keyVault()
        try held.useRollbackGuard(rollbackGuard)
        try held.set("old", service: "api", account: "alice")
        let copy = TestPaths.temporaryDirectory("copy") + "/copy.vault"
        RawDatabase(path).copy(to: copy)

        let other = try Self.open(path, key, rollbackGuard)
        try other.rekey()
        try other.set("new", service: "api", account: "alice")
        #expect(try held.string(service: "api", account: "alice") == "new")

        RawDatabase(path).putRowsBack(from: copy)
        #expect(try Vault.open(at: path, key: key).string(service: "api", account: "alice") == "old")
        let generation = try #require(RawDatabase(path).integer("SELECT generation FROM vault_generation"))
        let expected = VaultError.rolledBack(path: path, seenGeneration: 3, fileGeneration: UInt64(generation))
        #expect(throws: expected) { try Self.open(path, key, rollbackGuard) }
        for _ in 0..<2 {
            #expect(throws: expected) {
                switch call {
                case .get: _ = try held.string(service: "api", account: "alice")
                // A call that finds nothing has verified the state too.
                case .getMissing: _ = try held.string(service: "api", account: "nobody")
                case .list: _ = try held.items()
                case .set: try held.set("fork", service: "api", account: "alice")
                case .setNew:
                    // As `vault set` does: a look first (nothing found), then the write.
                    _ = try? held.contains(service: "api", account: "bob")
                    try held.set("fork", service: "api", account: "bob")
                case .verify: _ = try held.verify()
                }
            }
        }
        #expect(RawDatabase(path).integer("SELECT generation FROM vault_generation") == generation, "nothing was written")
    }

    /// A held vault that meets states others committed meanwhile, re-keys included,
    /// never reports a rollback: the record may be ahead of the snapshot it verified.
    @Test func aHeldVaultFollowingOtherCommitsIsNeverRolledBack() throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (held, path, key) = try Fixtures.keyVault()
        try held.useRollbackGuard(rollbackGuard)
        try held.set("0", service: "s", account: "a")
        let writerKey = key
        let done = Atomic(false)
        let writer = Thread {
            do {
                let other = try Self.open(path, writerKey, rollbackGuard)
                for round in 1...40 {
                    try other.set("\(round)", service: "s", account: "a")
                    if round % 10 == 0 { try other.rekey() }
                }
            } catch {
                Issue.record("writer: \(error)")
            }
            done.store(true)
        }
        writer.start()
        var reads = 0
        while !done.load() || reads == 0 {
            _ = try held.string(service: "s", account: "a")
            reads += 1
        }
        #expect(try held.string(service: "s", account: "a") == "40")
    }
}

/// A flag shared with a thread.
private final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    func load() -> Bool { lock.withLock { value } }
    func store(_ newValue: Bool) { lock.withLock { value = newValue } }
}
