import Foundation
import Testing
import TestTraits
import TestSupport
@testable import VaultKit

/// `Vault.location`: what a vault is and where, as each storage says (a file, or an
/// engine's URL), never guessed from text, and never holding a secret.
@Suite(.offCooperativePool) struct VaultLocationTests {
    init() { VaultEngines.register(.memoryKeyValue) }

    @Test func aVaultFilesLocationIsItsPathWhicheverWayItWasOpened() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        #expect(vault.location == .file(path: path))
        #expect(vault.location.description == path)
        vault.close()
        #expect(vault.location == .file(path: path))
        #expect(try Vault.open(at: path, passphrase: "correct horse").location == .file(path: path))
        #expect(try Vault.upgrade(at: path, passphrase: SecretBytes("correct horse")).location == .file(path: path))
    }

    @Test func aVaultByKeyAndItsBackupAreFilesToo() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        #expect(vault.location == .file(path: path))
        #expect(try Vault.open(at: path, key: key).location == .file(path: path))
        let copy = path + ".backup"
        try vault.backup(to: copy)
        #expect(try Vault.open(at: copy, key: key).location == .file(path: copy))
    }

    @Test func anEngineVaultsLocationIsItsURL() throws {
        let url = "memkv://location-\(UUID().uuidString)"
        let key = VaultKey.random()
        let vault = try Vault.create(url: url, key: key)
        #expect(vault.location == .engine(url: url))
        #expect(vault.location.description == url)
        #expect(try Vault.open(url: url, key: key).location == .engine(url: url))
    }

    /// The storage says what it is: the engine asks it rather than deciding by the text,
    /// so a storage whose location reads like a path is still not a file.
    @Test func theStorageSaysWhatItIs() throws {
        let storage = InMemoryStorage(location: "/looks/like/a/path")
        let key = VaultKey.random()
        let vault = try Vault.create(in: storage, key: key)
        #expect(vault.location == .engine(url: "/looks/like/a/path"))
    }

    @Test func aLocationPrintsAsItsPathOrURL() {
        #expect("\(Vault.Location.file(path: "/v/app.vault"))" == "/v/app.vault")
        #expect(String(describing: Vault.Location.engine(url: "postgres://app@db:5432/secrets#default")) == "postgres://app@db:5432/secrets#default")
        #expect(Vault.Location.file(path: "x") != .engine(url: "x"))
    }
}
