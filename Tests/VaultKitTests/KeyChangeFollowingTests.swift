import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// A handle that another handle's passphrase change or re-key left behind: it follows
/// when the passphrase it was opened with still opens the vault (only the salt, cost or
/// master key changed), and says the passphrase no longer opens it otherwise.
@Suite(.offCooperativePool) struct KeyChangeFollowingTests {
    /// `vault passwd` with the same passphrase: a new salt and a new master key at once.
    /// The writer's key-encryption key (the old salt's) opens neither; its passphrase does.
    @Test func aWriterFollowsARekeyUnderANewSaltForItsOwnPassphrase() throws {
        let (writer, path) = try Fixtures.passphraseVault()
        try writer.set("before", service: "svc", account: "a")
        let changer = try Vault.open(at: path, passphrase: "correct horse")
        try changer.rekey(changingPassphraseTo: SecretBytes("correct horse"), kdf: testKDF)
        try writer.set("after", service: "svc", account: "b")
        #expect(try writer.string(service: "svc", account: "a") == "before")
        try changer.set("later", service: "svc", account: "c")
        #expect(try writer.string(service: "svc", account: "c") == "later")
        writer.close()
        changer.close()
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(try reopened.items().map(\.account) == ["a", "b", "c"])
        #expect(try reopened.verify() == 3)
    }

    /// The same in two commits by another handle: a re-wrap (new salt), then a re-key.
    @Test func aWriterFollowsARewrapThenARekey() throws {
        let (writer, path) = try Fixtures.passphraseVault()
        let changer = try Vault.open(at: path, passphrase: "correct horse")
        try changer.changePassphrase(to: "correct horse", kdf: testKDF)
        try changer.rekey()
        try writer.set("after", service: "svc", account: "a")
        #expect(try writer.string(service: "svc", account: "a") == "after")
        // And a re-key by the follower is wrapped under the passphrase, as stored now.
        try writer.rekey()
        writer.close()
        changer.close()
        #expect(try Vault.open(at: path, passphrase: "correct horse").string(service: "svc", account: "a") == "after")
    }

    /// One call can meet the same change twice: in its own work, and in the rollback
    /// guard's comparison after it, which follows first. The second follow finds the handle
    /// already holding the new wrapping: not a reason to give up with `keyChanged` (which
    /// `vault set` beside `vault passwd` reported, with the rollback guard on).
    @Test func aChangeAlreadyFollowedIsFollowedAgainWithoutFailing() throws {
        let (writer, path) = try Fixtures.passphraseVault()
        let changer = try Vault.open(at: path, passphrase: "correct horse")
        try changer.rekey(changingPassphraseTo: SecretBytes("correct horse"), kdf: testKDF)
        let follows = try writer.withUnlocked { (vault) throws(VaultError) in
            [try vault.followChangedWrapping(), try vault.followChangedWrapping()]
        }
        #expect(follows == [true, true])
        try writer.set("after", service: "svc", account: "a")
        #expect(try changer.string(service: "svc", account: "a") == "after")
    }

    /// The async entry points follow too (on the vault's queue, where Argon2id may run).
    @Test func anAsyncWriterFollows() async throws {
        let (writer, path) = try Fixtures.passphraseVault()
        let changer = try await Vault.open(at: path, passphrase: "correct horse")
        try await changer.rekey(changingPassphraseTo: SecretBytes("correct horse"), kdf: testKDF)
        try await writer.set("after", service: "svc", account: "a")
        #expect(try await writer.string(service: "svc", account: "a") == "after")
    }

    /// A passphrase that no longer opens the vault: the write fails with `keyChanged`,
    /// whose message says so, and nothing is written.
    @Test func aWriterWhosePassphraseChangedIsToldSoAndWritesNothing() throws {
        let (writer, path) = try Fixtures.passphraseVault()
        let changer = try Vault.open(at: path, passphrase: "correct horse")
        try changer.rekey(changingPassphraseTo: SecretBytes("battery staple"), kdf: testKDF)
        #expect(throws: VaultError.keyChanged) { try writer.set("x", service: "svc", account: "a") }
        #expect(VaultError.keyChanged.description.contains("the passphrase or key this process opened it with does not open it now"))
        #expect(try changer.items().isEmpty)
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "correct horse") }
    }

    /// Another vault with the same passphrase put in this one's place (as a PostgreSQL
    /// vault dropped and created again): the handle does not follow into it.
    @Test func aWriterDoesNotFollowIntoAnotherVaultWithTheSamePassphrase() throws {
        let (writer, path) = try Fixtures.passphraseVault()
        try writer.set("mine", service: "svc", account: "a")
        let (other, otherPath) = try Fixtures.passphraseVault("anotherVault")
        try other.set("theirs", service: "svc", account: "b")
        other.close()
        let database = RawDatabase(path)
        database.execute("ATTACH DATABASE '\(otherPath)' AS other")
        for table in ["vault_header", "vault_items", "vault_manifest", "vault_generation"] {
            database.execute("DELETE FROM \(table); INSERT INTO \(table) SELECT * FROM other.\(table)")
        }
        #expect(throws: VaultError.keyChanged) { try writer.set("x", service: "svc", account: "c") }
        #expect(throws: VaultError.keyChanged) { try writer.item(service: "svc", account: "b") }
    }

    /// A re-key by a handle whose passphrase was changed by another must not wrap the new
    /// master key under the old passphrase again (which undid the change, silently).
    @Test func aRekeyDoesNotUndoAnotherHandlesPassphraseChange() throws {
        let (stale, path) = try Fixtures.passphraseVault()
        try stale.set("kept", service: "svc", account: "a")
        let changer = try Vault.open(at: path, passphrase: "correct horse")
        try changer.changePassphrase(to: "battery staple", kdf: testKDF)
        #expect(throws: VaultError.keyChanged) { try stale.rekey() }
        stale.close()
        changer.close()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "correct horse") }
        let reopened = try Vault.open(at: path, passphrase: "battery staple")
        #expect(try reopened.string(service: "svc", account: "a") == "kept")
        #expect(try reopened.verify() == 1)
    }

    /// The combined change replaces the master key and the passphrase: afterwards only
    /// the new passphrase opens, every item is there, and a handle opened with a raw key
    /// (which `changeKey` had set) is told its key no longer opens the vault.
    @Test func rekeyChangingThePassphraseReplacesBoth() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        for index in 0..<20 { try vault.set("v\(index)", service: "svc", account: "a\(index)") }
        let other = try Vault.open(at: path, key: key)
        try vault.rekey(changingPassphraseTo: SecretBytes("battery staple"), kdf: testKDF)
        #expect(try vault.kdfParameters == testKDF)
        #expect(throws: VaultError.keyChanged) { try other.set("x", service: "svc", account: "z") }
        vault.close()
        #expect(throws: VaultError.invalidArgument(.passphraseGivenForKeyVault)) { try Vault.open(at: path, key: key) }
        let reopened = try Vault.open(at: path, passphrase: "battery staple")
        #expect(try reopened.items().count == 20)
        #expect(try reopened.string(service: "svc", account: "a7") == "v7")
        #expect(try reopened.verify() == 20)
    }
}
