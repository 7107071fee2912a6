import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// The async twins of the service handle, `entry` and the value calls: the same results,
/// and none of their blocking work on a thread of the cooperative pool.
@Suite(.offCooperativePool) struct AsyncHandleAndValueTests {
    struct Login: Codable, Equatable {
        var user: String
        var expires: Date
    }

    @Test func theTwinsBehaveAlikeAndNeverBlockATask() async throws {
        let path = Fixtures.vaultPath()
        BlockingWorkProbe.watch(path)
        defer { _ = BlockingWorkProbe.stopWatching(path) }
        let vault = try await Vault.create(at: path, passphrase: "correct horse", kdf: testKDF)
        let api = vault.service("api")
        let login = Login(user: "alice", expires: Date(timeIntervalSinceReferenceDate: 800_000_000.5))

        try await api.set("one", account: "a", label: "L")
        try await api.set(SecretBytes("two"), account: "b")
        try await api.set(Data([3]), account: "c")
        try await api.add("four", account: "d")
        try await api.add(SecretBytes("five"), account: "e")
        await #expect(throws: VaultError.duplicateItem) { try await api.add("again", account: "a") }
        try await api.update("one!", account: "a")
        try await api.update(SecretBytes("two!"), account: "b")
        await #expect(throws: VaultError.itemNotFound) { try await api.update("x", account: "missing") }
        #expect(try await api.string(account: "a") == "one!")
        #expect(try await api.secret(account: "b") == SecretBytes("two!"))
        #expect(try await api.data(account: "c") == Data([3]))
        #expect(try await api.item(account: "a").label == "L")
        #expect(try await api.contains(account: "d"))
        #expect(try await api.entry(account: "missing") == nil)
        #expect(try await api.entry(account: "e")?.string() == "five")

        try await api.setValue(login, schemaVersion: 2, account: "v")
        #expect(try await api.value(Login.self, account: "v") == login)
        try await vault.setValue(VaultEncodedValue(schemaVersion: 5, json: SecretBytes("[7]")), service: "api", account: "w")
        #expect(try await vault.value([Int].self, service: "api", account: "w") == [7])
        #expect(try await vault.entry(service: "api", account: "v")?.encodedValue().schemaVersion == 2)
        await #expect(throws: VaultError.valueNotDecodable) { try await vault.value(Login.self, service: "api", account: "a") }

        #expect(try await api.accounts() == ["a", "b", "c", "d", "e", "v", "w"])
        #expect(try await api.items().count == 7)
        #expect(try await api.delete(account: "a"))
        #expect(try await api.deleteAll() == 6)
        await vault.close()

        let counted = BlockingWorkProbe.counted(path)
        #expect(counted.outsideTasks > 20)
        #expect(counted.insideTasks == 0, "blocking work inside a task: \(counted.insideTasks) of \(counted.insideTasks + counted.outsideTasks)")
    }
}
