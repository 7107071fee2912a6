import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Every item operation, round-tripped through a real vault file.
@Suite(.offCooperativePool) struct ItemTests {
    @Test func setThenReadAsStringDataSecretAndScoped() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("s3cr3t", service: "api.example.com", account: "alice")
        #expect(try vault.string(service: "api.example.com", account: "alice") == "s3cr3t")
        #expect(try vault.data(service: "api.example.com", account: "alice") == Data("s3cr3t".utf8))
        #expect(try vault.secret(service: "api.example.com", account: "alice") == SecretBytes("s3cr3t"))
        let count = try vault.withSecret(service: "api.example.com", account: "alice") { $0.count }
        #expect(count == 6)
    }

    @Test func attributesAndSecretInOneRead() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("s3cr3t", service: "s", account: "a", label: "L", generic: Data([1]))
        let entry = try #require(try vault.entry(service: "s", account: "a"))
        #expect(entry.item.label == "L" && entry.item.generic == Data([1]))
        #expect(entry.secret == SecretBytes("s3cr3t"))
        #expect(try vault.entry(service: "s", account: "b") == nil)
    }

    @Test func binaryAndEmptySecretsRoundTripExactly() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let binary = Data((0...255).map { UInt8($0) } + [0, 0, 10, 13])
        try vault.set(binary, service: "bin", account: "all-bytes")
        try vault.set(Data(), service: "bin", account: "empty")
        #expect(try vault.data(service: "bin", account: "all-bytes") == binary)
        #expect(try vault.data(service: "bin", account: "empty") == Data())
        #expect(throws: VaultError.secretNotUTF8) { try vault.string(service: "bin", account: "all-bytes") }
    }

    @Test func addFailsOnDuplicateAndKeepsTheOriginal() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.add("one", service: "s", account: "a")
        #expect(throws: VaultError.duplicateItem) { try vault.add("two", service: "s", account: "a") }
        #expect(try vault.string(service: "s", account: "a") == "one")
    }

    @Test func updateFailsWhenMissingAndReplacesWhenPresent() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.itemNotFound) { try vault.update("x", service: "s", account: "a") }
        #expect(try vault.contains(service: "s", account: "a") == false)
        try vault.add("one", service: "s", account: "a")
        try vault.update("two", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "two")
    }

    @Test func attributesAreKeptCreatedIsPreservedModifiedAdvances() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a", label: "Example", generic: Data([1, 2, 3]))
        let first = try vault.item(service: "s", account: "a")
        Thread.sleep(forTimeInterval: 0.01)
        try vault.set("two", service: "s", account: "a")
        let second = try vault.item(service: "s", account: "a")
        #expect(second.label == "Example")
        #expect(second.generic == Data([1, 2, 3]))
        #expect(second.created == first.created)
        #expect(second.modified > first.modified)
        try vault.update("three", service: "s", account: "a", label: "Renamed", generic: Data([9]))
        let third = try vault.item(service: "s", account: "a")
        #expect(third.label == "Renamed" && third.generic == Data([9]))
        #expect(abs(third.created.timeIntervalSinceNow) < 60)
    }

    @Test func deleteSaysWhetherItExisted() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("x", service: "s", account: "a")
        #expect(try vault.delete(service: "s", account: "a") == true)
        #expect(try vault.delete(service: "s", account: "a") == false)
        #expect(throws: VaultError.itemNotFound) { try vault.secret(service: "s", account: "a") }
        #expect(throws: VaultError.itemNotFound) { try vault.item(service: "s", account: "a") }
    }

    @Test func listsAllOrOneServiceSortedWithoutSecrets() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("1", service: "b", account: "zed")
        try vault.set("2", service: "a", account: "bob")
        try vault.set("3", service: "b", account: "amy")
        try vault.set("4", service: "a", account: "al")
        let all = try vault.items().map { "\($0.service)/\($0.account)" }
        #expect(all == ["a/al", "a/bob", "b/amy", "b/zed"])
        let b = try vault.items(service: "b").map(\.account)
        #expect(b == ["amy", "zed"])
        #expect(try vault.items(service: "none").isEmpty)
    }

    @Test func deleteAllOfOneServiceLeavesOthers() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        for account in ["x", "y", "z"] { try vault.set("v", service: "gone", account: account) }
        try vault.set("v", service: "kept", account: "x")
        #expect(try vault.deleteAll(service: "gone") == 3)
        #expect(try vault.items().map(\.service) == ["kept"])
    }

    @Test func namesThatOnlyDifferInWhereTheyAreSplitAreDistinct() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("1", service: "ab", account: "c")
        try vault.set("2", service: "a", account: "bc")
        #expect(try vault.string(service: "ab", account: "c") == "1")
        #expect(try vault.string(service: "a", account: "bc") == "2")
    }

    @Test func emptyServiceIsRejectedAndEmptyAccountAllowed() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.self) { try vault.set("x", service: "", account: "a") }
        try vault.set("x", service: "s", account: "")
        #expect(try vault.string(service: "s", account: "") == "x")
    }

    @Test func unicodeNamesAndSecrets() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("비밀번호 🔑", service: "서비스\tname\n", account: "사용자")
        #expect(try vault.string(service: "서비스\tname\n", account: "사용자") == "비밀번호 🔑")
    }

    @Test func batchAppliesAllWritesTogether() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("old", service: "s", account: "delete-me")
        try vault.batch { batch in
            for index in 0..<100 { try batch.set("v\(index)", service: "bulk", account: "a\(index)") }
            try batch.add("new", service: "s", account: "added")
            try batch.delete(service: "s", account: "delete-me")
        }
        #expect(try vault.items(service: "bulk").count == 100)
        #expect(try vault.string(service: "s", account: "added") == "new")
        #expect(try vault.contains(service: "s", account: "delete-me") == false)
    }

    @Test func aBatchThatThrowsWritesNothing() throws {
        struct Stop: Error {}
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("kept", service: "s", account: "existing")
        #expect(throws: Stop.self) {
            try vault.batch { batch in
                try batch.set("v", service: "s", account: "new")
                try batch.delete(service: "s", account: "existing")
                throw Stop()
            }
        }
        #expect(throws: VaultError.duplicateItem) {
            try vault.batch { batch in
                try batch.set("v", service: "s", account: "new")
                try batch.add("again", service: "s", account: "existing")
            }
        }
        #expect(try vault.items().map(\.account) == ["existing"])
    }

    @Test func aClosedVaultRefusesCalls() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        vault.close()
        #expect(throws: VaultError.closed) { try vault.set("x", service: "s", account: "a") }
        #expect(throws: VaultError.closed) { try vault.items() }
    }
}
