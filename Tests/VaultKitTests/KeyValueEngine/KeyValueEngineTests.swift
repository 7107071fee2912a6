import Foundation
import Testing
import TestTraits
import TestSupport
@testable import VaultKit

/// A third storage engine reached through its registration alone: a vault at a
/// `memkv://` URL lives its whole life through ``Vault``'s URL calls, and the key-value
/// store, written to behind the engine's back, is caught as the file would be.
@Suite(.offCooperativePool) struct KeyValueEngineTests {
    init() { VaultEngines.register(.memoryKeyValue) }

    static func newURL() -> String { "memkv://roundtrip-\(UUID().uuidString)" }

    @Test func aVaultLivesItsWholeLifeAtItsURL() throws {
        let url = Self.newURL()
        let key = VaultKey.random()
        let vault = try Vault.create(url: url, key: key)
        #expect(vault.location == .engine(url: url))
        try vault.set("one", service: "api", account: "alice")
        try vault.set("two", service: "api", account: "bob")
        #expect(try vault.string(service: "api", account: "alice") == "one")
        try vault.rekey()
        #expect(try vault.verify() == 2)
        vault.close()
        let reopened = try Vault.open(url: url, key: key)
        #expect(try reopened.string(service: "api", account: "bob") == "two")
        #expect(try reopened.verify() == 2)
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(url: url, key: VaultKey.random()) }
    }

    @Test func aPassphraseVaultOpensByURL() throws {
        let url = Self.newURL()
        try Vault.create(url: url, passphrase: SecretBytes("pass"), kdf: testKDF).close()
        #expect(try Vault.open(url: url, passphrase: SecretBytes("pass")).verify() == 0)
    }

    @Test func aSealedRecordChangedInTheStoreIsCaught() throws {
        let url = Self.newURL()
        let vault = try Vault.create(url: url, key: VaultKey.random())
        try vault.set("secret", service: "api", account: "alice")
        let database = KeyValueServer.shared.database(named: String(url.dropFirst("memkv://".count)))
        let (values, _) = database.snapshot()
        let itemKey = try #require(values.keys.first { $0.hasPrefix(KeyValueLayout.itemPrefix) })
        var row = try KeyValueLayout.decodeRow(KeyValueLayout.lookupID(ofItemKey: itemKey)!, values[itemKey]!)
        row.sealed[row.sealed.count - 1] ^= 1
        database.exec([itemKey: KeyValueLayout.encode(row)])
        #expect(throws: VaultError.tampered(reason: .itemFailedAuthentication)) { try vault.string(service: "api", account: "alice") }
        #expect(throws: VaultError.self) { try vault.verify() }
    }

    @Test func aKeyOutsideTheLayoutIsAChangedSchema() throws {
        let url = Self.newURL()
        let key = VaultKey.random()
        try Vault.create(url: url, key: key).close()
        KeyValueServer.shared.database(named: String(url.dropFirst("memkv://".count))).exec(["stray": [1]])
        #expect(throws: VaultError.tampered(reason: .schemaChanged)) { try Vault.open(url: url, key: key) }
    }

    @Test func creatingWhereAVaultIsSaysAVaultExistsThere() throws {
        let url = Self.newURL()
        try Vault.create(url: url, key: VaultKey.random()).close()
        let error = try #require(throws: VaultError.self) { try Vault.create(url: url, key: VaultKey.random()) }
        #expect(error == .vaultAlreadyExists(path: url))
        #expect(error.description == "a vault already exists at \(url)")
        #expect(VaultError.vaultAlreadyExists(path: "/tmp/v").description == "a file already exists at /tmp/v")
    }

    @Test func openingWhereNoVaultIsSaysSo() throws {
        let url = Self.newURL()
        #expect(throws: VaultError.vaultNotFound(path: url)) { try Vault.open(url: url, key: VaultKey.random()) }
    }

    @Test func aURLOfNoRegisteredSchemeIsRefusedAndAPathIsNoURL() throws {
        #expect(throws: VaultError.invalidArgument(.noEngineForURL)) { try Vault.open(url: "nosuchengine://x", key: VaultKey.random()) }
        #expect(VaultEngines.isEngineURL("MEMKV://x"))
        #expect(!VaultEngines.isEngineURL("/tmp/memkv://x"))
        #expect(!VaultEngines.isEngineURL("memkv:x"))
        #expect(!VaultEngines.isEngineURL("nosuchengine://x"))
    }
}
