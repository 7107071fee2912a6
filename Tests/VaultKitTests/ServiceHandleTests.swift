import Foundation
import Testing
import TestTraits
import VaultKit

/// `vault.service(_:)`: the items of one service by account, forwarding to the vault.
@Suite(.offCooperativePool) struct ServiceHandleTests {
    @Test func writesAndReadsAreTheVaultsOwn() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api.example.com")
        #expect(api.name == "api.example.com")
        try api.set("s3cr3t", account: "alice", label: "Example API", generic: Data([7]))
        #expect(try vault.string(service: "api.example.com", account: "alice") == "s3cr3t")
        #expect(try api.string(account: "alice") == "s3cr3t")
        #expect(try api.data(account: "alice") == Data("s3cr3t".utf8))
        #expect(try api.secret(account: "alice") == SecretBytes("s3cr3t"))
        let item = try api.item(account: "alice")
        #expect(item.label == "Example API" && item.generic == Data([7]) && item.service == "api.example.com")

        try vault.set(Data([0, 1, 2]), service: "api.example.com", account: "bob")
        #expect(try api.data(account: "bob") == Data([0, 1, 2]))
        try api.set(SecretBytes("three"), account: "carol")
        try api.set(Data([9]), account: "dave")
        #expect(try api.data(account: "dave") == Data([9]))
        #expect(try api.accounts() == ["alice", "bob", "carol", "dave"])
        #expect(try api.items().map(\.account) == ["alice", "bob", "carol", "dave"])
    }

    @Test func addUpdateDeleteKeepTheirErrors() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api")
        try api.add("one", account: "a")
        #expect(throws: VaultError.duplicateItem) { try api.add("two", account: "a") }
        #expect(throws: VaultError.duplicateItem) { try api.add(SecretBytes("two"), account: "a") }
        #expect(throws: VaultError.itemNotFound) { try api.update("x", account: "missing") }
        #expect(throws: VaultError.itemNotFound) { try api.update(SecretBytes("x"), account: "missing") }
        #expect(throws: VaultError.itemNotFound) { try api.string(account: "missing") }
        try api.update("updated", account: "a", label: "L")
        #expect(try api.string(account: "a") == "updated")
        #expect(try api.item(account: "a").label == "L")
        #expect(try api.contains(account: "a"))
        #expect(try !api.contains(account: "missing"))
        #expect(try api.delete(account: "a"))
        #expect(try !api.delete(account: "a"))
        #expect(try !api.contains(account: "a"))
    }

    @Test func aServiceSeesOnlyItsOwnItems() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let one = vault.service("one"), two = vault.service("two")
        try one.set("1", account: "shared")
        try two.set("2", account: "shared")
        try two.set("2b", account: "other")
        #expect(try one.string(account: "shared") == "1")
        #expect(try one.accounts() == ["shared"])
        #expect(try two.deleteAll() == 2)
        #expect(try two.accounts().isEmpty)
        #expect(try one.string(account: "shared") == "1")
    }

    @Test func entryIsNilOnlyForAMissingItem() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api")
        #expect(try api.entry(account: "a") == nil)
        try api.set("x", account: "a")
        #expect(try api.entry(account: "a")?.string() == "x")
        #expect(throws: VaultError.invalidArgument(.emptyService)) { try vault.service("").entry(account: "a") }
        vault.close()
        #expect(throws: VaultError.closed) { try api.entry(account: "a") }
    }

    @Test func valuesThroughTheHandle() throws {
        struct Login: Codable, Equatable { var user: String; var expires: Date }
        let (vault, _) = try Fixtures.passphraseVault()
        let api = vault.service("api")
        let login = Login(user: "alice", expires: Date(timeIntervalSinceReferenceDate: 812_345_678.125))
        try api.setValue(login, schemaVersion: 3, account: "alice", label: "login")
        #expect(try api.value(Login.self, account: "alice") == login)
        #expect(try vault.value(Login.self, service: "api", account: "alice") == login)
        #expect(try api.entry(account: "alice")?.encodedValue().schemaVersion == 3)
        #expect(try api.item(account: "alice").label == "login")
    }
}
