import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// The vault identity (docs/FORMAT.md section 12.1): a host opens only a vault whose host
/// wraps are signed by the identity it pinned, never one built for its public key by
/// someone who can write the file but holds no passphrase or key.
@Suite(.offCooperativePool) struct VaultIdentityTests {
    /// The attack: a vault of the attacker's own, with the host's public key added,
    /// moved into place of the real one.
    @Test func anAttackersVaultForTheHostsPublicKeyIsRefused() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("real", service: "db", account: "app")
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        let pinned = try vault.identity()
        vault.close()

        let attackerPath = path + ".attacker"
        let forged = try Vault.create(at: attackerPath, passphrase: "attacker's own", kdf: testKDF)
        try forged.set("attacker's value", service: "db", account: "app")
        try forged.addHost(host.publicKey, name: "web2")
        forged.close()
        #expect(rename(attackerPath, path) == 0)

        #expect(throws: VaultError.tampered(reason: .vaultIdentityNotPinned)) {
            try Vault.open(at: path, hostKey: host, identity: pinned)
        }
        // Without an identity at all (as VaultKit wrote wraps before identities): refused too.
        RawDatabase(path).execute("DELETE FROM vault_host_wraps WHERE name = ''")
        #expect(throws: VaultError.tampered(reason: .vaultIdentityMissing)) {
            try Vault.open(at: path, hostKey: host, identity: pinned)
        }
    }

    /// The real identity's row copied into the attacker's vault: its signature covers the
    /// real vault's id and wraps, not the attacker's.
    @Test func theRealIdentityRowCopiedIntoAnotherVaultDoesNotVerify() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        let pinned = try vault.identity()
        let identityRow = RawDatabase(path).rows("SELECT public_key, sealed_master_key FROM vault_host_wraps WHERE name = ''")[0]
        vault.close()

        let attackerPath = path + ".attacker"
        let forged = try Vault.create(at: attackerPath, passphrase: "attacker's own", kdf: testKDF)
        try forged.addHost(host.publicKey, name: "web2")
        forged.close()
        RawDatabase(attackerPath).execute("UPDATE vault_host_wraps SET public_key = X'\(identityRow[0])', sealed_master_key = X'\(identityRow[1])' WHERE name = ''")
        #expect(rename(attackerPath, path) == 0)
        #expect(throws: VaultError.tampered(reason: .hostWrapsSignatureInvalid)) {
            try Vault.open(at: path, hostKey: host, identity: pinned)
        }
    }

    @Test func aPinOfAnotherVaultIsRefused() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        let (other, _) = try Fixtures.passphraseVault("other")
        let otherIdentity = try other.identity()
        #expect(otherIdentity != (try vault.identity()))
        #expect(throws: VaultError.tampered(reason: .vaultIdentityNotPinned)) {
            try Vault.open(at: path, hostKey: host, identity: otherIdentity)
        }
        // Any one of several pins will do (a host key enrolled in several vaults).
        #expect(try Vault.open(at: path, hostKey: host, identities: [otherIdentity, try vault.identity()]).verify() == 0)
    }

    /// A host's wrap replaced with one sealing another master key (the attacker's), the
    /// identity row left alone: the signature no longer covers the wraps.
    @Test func aSignatureOverOtherWrapsIsRefused() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web3")
        let pinned = try vault.identity()
        let raw = RawDatabase(path)
        let attackersWrap = try HostWraps.seal(KeyHierarchy.randomMasterKey(), to: host.publicKey)
        raw.execute("UPDATE vault_host_wraps SET sealed_master_key = X'\(Self.hex(attackersWrap))' WHERE name = 'web2'")
        #expect(throws: VaultError.tampered(reason: .hostWrapsSignatureInvalid)) {
            try Vault.open(at: path, hostKey: host, identity: pinned)
        }
        // A host removed from the rows, the rest left as signed: refused as well.
        let (vault2, path2) = try Fixtures.passphraseVault("second")
        try vault2.addHost(host.publicKey, name: "web2")
        try vault2.addHost(HostKeyPair.generate().publicKey, name: "web3")
        let pinned2 = try vault2.identity()
        RawDatabase(path2).execute("DELETE FROM vault_host_wraps WHERE name = 'web3'")
        #expect(throws: VaultError.tampered(reason: .hostWrapsSignatureInvalid)) {
            try Vault.open(at: path2, hostKey: host, identity: pinned2)
        }
        // A damaged identity row is reported as such.
        RawDatabase(path2).execute("UPDATE vault_host_wraps SET sealed_master_key = X'01' WHERE name = ''")
        #expect(throws: VaultError.corrupted(reason: .invalidVaultIdentity)) {
            try Vault.open(at: path2, hostKey: host, identity: pinned2)
        }
    }

    /// A host removed by a re-key kept the old file and the old master key. With them it
    /// can make a vault of its own for the remaining hosts' public keys, or carry the
    /// real identity row into it, but cannot sign the result.
    @Test func aRemovedHostCannotForgeAVaultTheRemainingHostsAccept() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("real", service: "db", account: "app")
        let removed = HostKeyPair.generate(), remaining = HostKeyPair.generate()
        try vault.addHost(removed.publicKey, name: "old")
        try vault.addHost(remaining.publicKey, name: "web2")
        let pinned = try vault.identity()
        let onRemoved = try Vault.open(at: path, hostKey: removed, identity: pinned)
        #expect(try onRemoved.string(service: "db", account: "app") == "real")
        try vault.removeHost("old")
        vault.close()
        // The removed host's handle can neither sign nor follow.
        #expect(throws: VaultError.keyChanged) { try onRemoved.set("x", service: "db", account: "app") }
        #expect(throws: VaultError.invalidArgument(.hostChangeNeedsPassphraseOrKey)) {
            try onRemoved.addHost(HostKeyPair.generate().publicKey, name: "evil")
        }
        onRemoved.close()

        // Its own vault, for web2's public key, with the real identity's row carried over.
        let identityRow = RawDatabase(path).rows("SELECT public_key, sealed_master_key FROM vault_host_wraps WHERE name = ''")[0]
        let forgedPath = path + ".forged"
        let forged = try Vault.create(at: forgedPath, passphrase: "removed host's own", kdf: testKDF)
        try forged.set("forged", service: "db", account: "app")
        try forged.addHost(remaining.publicKey, name: "web2")
        forged.close()
        #expect(throws: VaultError.tampered(reason: .vaultIdentityNotPinned)) {
            try Vault.open(at: forgedPath, hostKey: remaining, identity: pinned)
        }
        RawDatabase(forgedPath).execute("UPDATE vault_host_wraps SET public_key = X'\(identityRow[0])', sealed_master_key = X'\(identityRow[1])' WHERE name = ''")
        #expect(rename(forgedPath, path) == 0)
        #expect(throws: VaultError.tampered(reason: .hostWrapsSignatureInvalid)) {
            try Vault.open(at: path, hostKey: remaining, identity: pinned)
        }
    }

    /// The identity lives under the KEK: it survives re-keys, host removal and passphrase
    /// or key changes, and hosts keep opening after each.
    /// `vault passwd`'s one transaction (a new master key and a new passphrase) re-signs
    /// the wraps and seals the identity's seed under the new passphrase's KEK: hosts keep
    /// opening with their pin, and only the new passphrase can sign a new host.
    @Test func aPassphraseChangingReKeyKeepsTheIdentityAndItsHosts() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        let pinned = try vault.identity()

        try vault.rekey(changingPassphraseTo: SecretBytes("new horse"), kdf: testKDF)
        #expect(try vault.identity() == pinned)
        #expect(try Vault.open(at: path, hostKey: host, identity: pinned).string(service: "s", account: "a") == "one")
        // The same handle signs with the seed now sealed under the new KEK.
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web3")
        vault.close()

        let reopened = try Vault.open(at: path, passphrase: "new horse")
        #expect(try reopened.identity() == pinned)
        let another = HostKeyPair.generate()
        try reopened.addHost(another.publicKey, name: "web4")
        #expect(try Vault.open(at: path, hostKey: another, identity: pinned).verify() == 1)
        #expect(try Vault.open(at: path, hostKey: host, identity: pinned).verify() == 1)
    }

    @Test func theIdentitySurvivesReKeyRemovalAndPassphraseChanges() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web2")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web3")
        let pinned = try vault.identity()
        let onHost = try Vault.open(at: path, hostKey: host, identity: pinned)
        let opensOnHost = { try Vault.open(at: path, hostKey: host, identity: pinned).string(service: "s", account: "a") == "one" }

        try vault.rekey()
        #expect(try vault.identity() == pinned)
        #expect(try opensOnHost())
        // The open handle follows the re-key after checking the new wraps' signature.
        #expect(try onHost.string(service: "s", account: "a") == "one")

        try vault.removeHost("web3")
        #expect(try opensOnHost())
        #expect(try onHost.string(service: "s", account: "a") == "one")

        try vault.changePassphrase(to: "new horse", kdf: testKDF)
        vault.close()
        // The seed opens under the new passphrase alone: a new host is signed with it.
        let reopened = try Vault.open(at: path, passphrase: "new horse")
        #expect(try reopened.identity() == pinned)
        let another = HostKeyPair.generate()
        try reopened.addHost(another.publicKey, name: "web4")
        #expect(try Vault.open(at: path, hostKey: another, identity: pinned).verify() == 1)

        let key = VaultKey.random()
        try reopened.changeKey(to: key)
        reopened.close()
        let byKey = try Vault.open(at: path, key: key)
        #expect(try byKey.identity() == pinned)
        try byKey.rekey()
        #expect(try opensOnHost())
        #expect(try byKey.verify() == 1)
        // Every host removed: the identity stays for the next one.
        try byKey.removeHost("web2")
        try byKey.removeHost("web4")
        #expect(try byKey.hosts().isEmpty)
        #expect(try byKey.identity() == pinned)
    }

    /// A vault whose hosts were added before identities: its hosts are refused with a
    /// reason saying what to run, until a passphrase holder creates the identity.
    @Test func aVaultWithHostsFromBeforeIdentitiesGetsOneFromAPassphraseHolder() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate()
        try Self.addHostAsBeforeIdentities(vault, host.publicKey, name: "web2")
        #expect(try vault.verify() == 1)
        #expect(RawDatabase(path).rows("SELECT name FROM vault_host_wraps").map { $0[0] } == [Self.hex(Array("web2".utf8))])
        let somePin = try Fixtures.passphraseVault("other").0.identity()
        #expect(throws: VaultError.tampered(reason: .vaultIdentityMissing)) {
            try Vault.open(at: path, hostKey: host, identity: somePin)
        }
        #expect(VaultError.tampered(reason: .vaultIdentityMissing).description.contains("vault host identity"))

        let identity = try vault.identity()
        #expect(try vault.identity() == identity)
        #expect(try Vault.open(at: path, hostKey: host, identity: identity).string(service: "s", account: "a") == "one")
        #expect(try Vault.open(at: path, passphrase: "correct horse").verify() == 1)
    }

    /// A handle whose passphrase another process changed cannot open the identity: that
    /// is reported as such, not as tampering.
    @Test func aPassphraseChangedByAnotherHandleIsNotTampering() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web2")
        let other = try Vault.open(at: path, passphrase: "correct horse")
        try other.changePassphrase(to: "new horse", kdf: testKDF)
        #expect(throws: VaultError.keyChanged) { try vault.addHost(HostKeyPair.generate().publicKey, name: "web3") }
        #expect(throws: VaultError.keyChanged) { try vault.identity() }
        #expect(try other.hosts().map(\.name) == ["web2"])
    }

    @Test func fingerprintsReadBackAndNothingElseIsOne() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let identity = try vault.identity()
        #expect(identity.fingerprint.hasPrefix("vkid1:"))
        #expect(identity.fingerprint.count == 70)
        #expect(try VaultIdentity(fingerprint: " " + identity.fingerprint + "\n") == identity)
        for bad in ["", "vkid1:", identity.fingerprint.uppercased(), String(identity.fingerprint.dropLast()),
                    identity.fingerprint + "0", "vk1:" + identity.fingerprint.dropFirst(6), identity.fingerprint.replacingOccurrences(of: "vkid1:", with: "vkid2:")] {
            #expect(throws: VaultError.invalidArgument(.invalidVaultIdentityFingerprint)) { try VaultIdentity(fingerprint: bad) }
        }
    }

    @Test func aLowOrderPublicKeyIsNeverSealedTo() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.invalidArgument(.hostPublicKeyLowOrder)) {
            try vault.addHost(HostPublicKey(bytes: [UInt8](repeating: 0, count: 32)), name: "zero")
        }
        #expect(try vault.hosts().isEmpty)
        #expect(RawDatabase(path).integer("SELECT count(*) FROM sqlite_schema WHERE name = 'vault_host_wraps'") == 0)
    }

    /// What `addHost` wrote before vault identities: the host's wrap alone, tagged.
    static func addHostAsBeforeIdentities(_ vault: Vault, _ publicKey: HostPublicKey, name: String) throws {
        try vault.withUnlocked { (vault) throws(VaultError) in
            vault.manifestCheck.committing = nil
            let header = try vault.store.writeTransaction { () throws(VaultError) -> VaultHeader in
                let (_, generation, root) = try vault.verifiedState()
                var wraps = try vault.store.readHostWraps() ?? []
                wraps.append(StoredHostWrap(name: name, publicKey: publicKey.bytes, sealedMasterKey: try HostWraps.seal(vault.keys.masterKey, to: publicKey)))
                try vault.store.replaceHostWraps(wraps)
                let header = try vault.store.readHeader()
                try vault.store.writeManifestRoot(root, tag: vault.keys.manifestRootTag(root, header: header, generation: generation + 1), generation: generation + 1)
                vault.manifestCheck.committing = (generation + 1, root)
                return header
            }
            vault.header = header
            vault.recordCommit()
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
