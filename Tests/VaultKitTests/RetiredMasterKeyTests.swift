import Foundation
import Testing
import TestTraits
import TestSupport
@testable import VaultKit

/// The rollback record's retired master keys (docs/FORMAT.md section 10): a host removed
/// with `removeHost` still holds the old master key, so it can write the vault back as it
/// was before its removal, at any generation it likes and with a valid manifest tag. Every
/// holder whose record has seen the new key says `rolledBack`; legitimate key changes
/// never do.
@Suite(.offCooperativePool) struct RetiredMasterKeyTests {
    static let passphrase = "correct horse"

    static func guardDirectory(_ holder: String, _ label: String = #function) -> RollbackGuard {
        RollbackGuard(directory: TestPaths.temporaryDirectory(label) + "/\(holder)/rollback")
    }

    static func openWithPassphrase(_ path: String, _ rollbackGuard: RollbackGuard, accepting: Bool = false) throws -> Vault {
        let vault = try Vault.open(at: path, passphrase: passphrase)
        try vault.useRollbackGuard(rollbackGuard, acceptingCurrentState: accepting)
        return vault
    }

    static func openAsHost(_ path: String, _ host: HostKeyPair, _ pinned: VaultIdentity, _ rollbackGuard: RollbackGuard) throws -> Vault {
        let vault = try Vault.open(at: path, hostKey: host, identity: pinned)
        try vault.useRollbackGuard(rollbackGuard)
        return vault
    }

    /// What a holder of an old master key can do: re-tag the stored state at a generation
    /// of its choosing, as every honest commit under that key does.
    static func forgeGeneration(_ generation: UInt64, of vault: Vault) throws {
        try vault.withUnlocked { (vault) throws(VaultError) in
            let state = try vault.verifiedState()
            let header = try vault.store.readHeader()
            let tag = vault.keys.manifestRootTag(state.root, header: header, generation: generation)
            try vault.store.writeTransaction { () throws(VaultError) in
                try vault.store.writeManifestRoot(state.root, tag: tag, generation: generation)
            }
        }
    }

    static func generation(of path: String) throws -> UInt64 {
        UInt64(try #require(RawDatabase(path).integer("SELECT generation FROM vault_generation")))
    }

    static func record(_ rollbackGuard: RollbackGuard) throws -> [UInt8] {
        Fixtures.bytes(of: try RollbackGuardRecordTests.recordPath(rollbackGuard))
    }

    /// How a holder other than the one who removed the host came to know the new key.
    enum Holder: String, CaseIterable {
        /// Opened the vault after the removal (a remaining host, with its host key).
        case remainingHost
        /// Held the vault open across the removal and followed it at its next read (the agent).
        case heldPassphraseHandle
        /// Held the vault open across a `vault passwd` that kept the passphrase (new salt,
        /// new master key), followed through `followChangedWrapping`.
        case heldAcrossPasswd
    }

    /// The attack, end to end: the removed host kept the pre-removal rows (its own wrap in
    /// them) and puts them back with a generation past any state seen and a tag it
    /// computed under the old master key. Without the record's retired keys, that state
    /// looks newer than everything seen and every holder takes it.
    @Test(arguments: Holder.allCases)
    func aRemovedHostsPreRemovalStateAtAHigherGenerationIsRolledBack(holder: Holder) throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let (ownerGuard, holderGuard, lateGuard) = (Self.guardDirectory("owner"), Self.guardDirectory("holder"), Self.guardDirectory("late"))
        try vault.useRollbackGuard(ownerGuard)
        try vault.set("v1-old-password", service: "db", account: "admin")
        let removed = HostKeyPair.generate(), remaining = HostKeyPair.generate()
        try vault.addHost(removed.publicKey, name: "old")
        try vault.addHost(remaining.publicKey, name: "web2")
        let pinned = try vault.identity()
        // A remaining host that does not open the vault again before the replay.
        try Self.openAsHost(path, remaining, pinned, lateGuard).close()
        // The holder knows the vault under the key to be retired: in use before the removal.
        let held = holder == .remainingHost ? nil : try Self.openWithPassphrase(path, holderGuard)
        if holder == .remainingHost { try Self.openAsHost(path, remaining, pinned, holderGuard).close() }
        // What the host to be removed keeps: every row as it is now, its own wrap among them.
        let kept = TestPaths.temporaryDirectory("kept") + "/kept.vault"
        RawDatabase(path).copy(to: kept)

        if holder == .heldAcrossPasswd { try vault.rekey(changingPassphraseTo: SecretBytes(Self.passphrase), kdf: testKDF) }
        try vault.removeHost("old")
        try vault.set("v2-new-password", service: "db", account: "admin")
        switch holder {
        case .remainingHost:
            let host = try Self.openAsHost(path, remaining, pinned, holderGuard)
            #expect(try host.string(service: "db", account: "admin") == "v2-new-password")
            host.close()
        case .heldPassphraseHandle, .heldAcrossPasswd:
            #expect(try held?.string(service: "db", account: "admin") == "v2-new-password")
        }
        let seen = try Self.generation(of: path)

        RawDatabase(path).putRowsBack(from: kept, hostWraps: true)
        let forged = seen + 100
        let attacker = try Vault.open(at: path, hostKey: removed, identity: pinned)
        try Self.forgeGeneration(forged, of: attacker)
        #expect(try attacker.string(service: "db", account: "admin") == "v1-old-password")
        attacker.close()
        // Self-consistent, and past every generation seen: only the key tells it apart.
        #expect(try Vault.open(at: path, passphrase: Self.passphrase).verify() == 1)
        #expect(try Self.generation(of: path) == forged)

        let expected = VaultError.rolledBack(path: path, seenGeneration: seen, fileGeneration: forged)
        #expect(throws: expected) { try Self.openWithPassphrase(path, ownerGuard) }
        #expect(throws: expected) { try vault.string(service: "db", account: "admin") }
        #expect(throws: expected) { try vault.set("fork", service: "db", account: "admin") }
        switch holder {
        case .remainingHost:
            #expect(throws: expected) { try Self.openAsHost(path, remaining, pinned, holderGuard) }
        case .heldPassphraseHandle, .heldAcrossPasswd:
            #expect(throws: expected) { try held?.string(service: "db", account: "admin") }
            #expect(throws: expected) { try Self.openWithPassphrase(path, holderGuard) }
        }
        #expect(try Self.generation(of: path) == forged, "nothing was written")
        // A host that never saw the new key cannot tell: to it this is a newer state under
        // the key it knows (docs/THREAT-MODEL.md).
        #expect(try Self.openAsHost(path, remaining, pinned, lateGuard).string(service: "db", account: "admin") == "v1-old-password")
    }

    /// Re-keys, a passphrase change, hosts added and removed, each holder opening at its
    /// own pace (some seeing several key changes at once, one held across them all): no
    /// false `rolledBack`; and each change's holder of the record retires the old key.
    @Test func legitimateKeyChangesAreNeverRolledBack() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let guards = ["owner", "web1", "web2", "web3", "held"].map { Self.guardDirectory($0) }
        try vault.useRollbackGuard(guards[0])
        try vault.set("0", service: "s", account: "a")
        let web1 = HostKeyPair.generate(), web2 = HostKeyPair.generate(), web3 = HostKeyPair.generate()
        try vault.addHost(web1.publicKey, name: "web1")
        try vault.addHost(web2.publicKey, name: "web2")
        let pinned = try vault.identity()
        let held = try Self.openWithPassphrase(path, guards[4])
        var hosts = [(web1, guards[1]), (web2, guards[2])]
        var expectedValue = "0"
        let openEveryone = { () throws in
            for (host, rollbackGuard) in hosts {
                #expect(try Self.openAsHost(path, host, pinned, rollbackGuard).string(service: "s", account: "a") == expectedValue)
            }
            #expect(try held.string(service: "s", account: "a") == expectedValue)
            #expect(try Self.openWithPassphrase(path, guards[0]).verify() == 1)
        }
        try openEveryone()
        for step in 1...6 {
            switch step {
            case 1, 2: try vault.rekey()
            case 3: try vault.rekey(changingPassphraseTo: SecretBytes(Self.passphrase), kdf: testKDF)
            case 4:
                try vault.addHost(web3.publicKey, name: "web3")
                hosts.append((web3, guards[3]))
            case 5:
                try vault.removeHost("web2")
                hosts.remove(at: 1)
            default: try vault.changePassphrase(to: SecretBytes(Self.passphrase), kdf: testKDF)
            }
            expectedValue = "\(step)"
            try vault.set(expectedValue, service: "s", account: "a")
            // web1 and web3 open only every other step: they meet two key changes at once.
            if step.isMultiple(of: 2) { try openEveryone() }
        }
        // The owner's record retired each of the four master keys replaced (two re-keys,
        // a passphrase change that re-keyed, a host removal); a re-wrap keeps the key.
        let record = try Self.record(guards[0])
        #expect(Array(record.prefix(8)) == Array("VKRG0003".utf8))
        #expect(record.count == RollbackGuardFile.baseCount + 4 * 32 && record[80] == 4)
    }

    /// A record of the second format (no keys) authenticates and is carried over: the
    /// generation it holds still counts, and from then on the key is recorded.
    @Test func aFormatTwoRecordIsCarriedOver() throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        let oldCopy = TestPaths.temporaryDirectory("old") + "/old.vault"
        RawDatabase(path).copy(to: oldCopy)
        try vault.set("x", service: "s", account: "a")
        let state = try vault.withUnlocked { (vault) throws(VaultError) in try vault.verifiedState() }
        vault.close()
        let guardKey = try #require(try RollbackGuardKey.load(directory: rollbackGuard.directory))
        var body: [UInt8] = []
        withUnsafeBytes(of: state.generation.littleEndian) { body += $0 }
        body += state.root.bytes
        let magic = Array("VKRG0002".utf8)
        let formatTwo = magic + body + guardKey.mac(magic: magic, vaultID: state.vaultID, body: body)
        let recordPath = try RollbackGuardRecordTests.recordPath(rollbackGuard)
        Fixtures.write(formatTwo, to: recordPath)

        RawDatabase(path).putRowsBack(from: oldCopy)
        #expect(throws: VaultError.rolledBack(path: path, seenGeneration: 1, fileGeneration: 0)) {
            try RollbackGuardRecordTests.open(path, key, rollbackGuard)
        }
        #expect(Fixtures.bytes(of: recordPath) == formatTwo)
        _ = try RollbackGuardRecordTests.open(path, key, rollbackGuard, accepting: true)
        let record = Fixtures.bytes(of: recordPath)
        #expect(Array(record.prefix(8)) == Array("VKRG0003".utf8) && record.count == RollbackGuardFile.baseCount)

        var forged = formatTwo
        forged[79] ^= 1
        Fixtures.write(forged, to: recordPath)
        #expect(throws: VaultError.rollbackRecordInvalid(path: recordPath)) { try RollbackGuardRecordTests.open(path, key, rollbackGuard) }
    }

    /// The record keeps the last ``RollbackGuardFile/maximumRetiredKeys`` retired keys,
    /// oldest dropped first: the newest ones still count, and the record's length stops.
    @Test func theRetiredKeysAreBounded() throws {
        let rollbackGuard = RollbackGuardTests.guardDirectory()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.useRollbackGuard(rollbackGuard)
        let copies = TestPaths.temporaryDirectory("copies")
        RawDatabase(path).copy(to: copies + "/first.vault")
        for _ in 0..<(RollbackGuardFile.maximumRetiredKeys + 1) { try vault.rekey() }
        RawDatabase(path).copy(to: copies + "/last.vault")
        try vault.rekey()
        vault.close()
        let record = try Self.record(rollbackGuard)
        #expect(record.count == RollbackGuardFile.maximumCount && Int(record[80]) == RollbackGuardFile.maximumRetiredKeys)

        // The last key retired is still known, at any generation.
        RawDatabase(path).putRowsBack(from: copies + "/last.vault")
        let lastKeyVault = try Vault.open(at: path, key: key)
        try Self.forgeGeneration(1000, of: lastKeyVault)
        lastKeyVault.close()
        #expect(throws: VaultError.rolledBack(path: path, seenGeneration: UInt64(RollbackGuardFile.maximumRetiredKeys + 2), fileGeneration: 1000)) {
            try RollbackGuardRecordTests.open(path, key, rollbackGuard)
        }
        // The first key, retired 66 re-keys ago, was dropped: that state is compared by its generation alone.
        RawDatabase(path).putRowsBack(from: copies + "/first.vault")
        let firstKeyVault = try Vault.open(at: path, key: key)
        try Self.forgeGeneration(1000, of: firstKeyVault)
        firstKeyVault.close()
        #expect(try RollbackGuardRecordTests.open(path, key, rollbackGuard).verify() == 0)
    }
}
