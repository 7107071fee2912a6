import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// The async API: the same behaviour as the blocking one, and none of its blocking work
/// (SQLite statements, fsync inside commits, Argon2id) on a thread of Swift's
/// cooperative pool, shown structurally by a probe in every such call.
@Suite(.offCooperativePool) struct AsyncTests {
    @Test func noBlockingWorkRunsInsideATask() async throws {
        let path = Fixtures.vaultPath()
        let backupPath = TestPaths.temporaryDirectory("async-backup") + "/copy.vault"
        BlockingWorkProbe.watch(path)
        BlockingWorkProbe.watch(backupPath)
        defer {
            _ = BlockingWorkProbe.stopWatching(path)
            _ = BlockingWorkProbe.stopWatching(backupPath)
        }

        let vault = try await Vault.create(at: path, passphrase: "correct horse", kdf: testKDF)
        try await vault.set("s3cr3t", service: "api", account: "alice", label: "A")
        try await vault.add(SecretBytes(Data("two".utf8)), service: "api", account: "bob")
        try await vault.update("s3cr3t 2", service: "api", account: "alice")
        #expect(try await vault.string(service: "api", account: "alice") == "s3cr3t 2")
        #expect(try await vault.item(service: "api", account: "alice").label == "A")
        #expect(try await vault.entry(service: "api", account: "bob")?.secret.withUnsafeBytes { Data($0) } == Data("two".utf8))
        #expect(try await vault.contains(service: "api", account: "carol") == false)
        try await vault.batch { batch in
            for index in 0..<10 { try batch.set("v\(index)", service: "batch", account: "\(index)") }
        }
        #expect(try await vault.items().count == 12)
        #expect(try await vault.deleteAll(service: "batch") == 10)
        #expect(try await vault.delete(service: "api", account: "bob"))
        try await vault.changePassphrase(to: "new horse", kdf: testKDF)
        try await vault.rekey()
        #expect(try await vault.verify() == 1)
        #expect(try await vault.backup(to: backupPath) == 1)
        await vault.close()
        let reopened = try await Vault.open(at: path, passphrase: "new horse")
        #expect(try await reopened.data(service: "api", account: "alice") == Data("s3cr3t 2".utf8))

        let counted = BlockingWorkProbe.counted(path)
        let backupCounted = BlockingWorkProbe.counted(backupPath)
        #expect(counted.outsideTasks > 20)
        #expect(backupCounted.outsideTasks > 0)
        #expect(counted.insideTasks == 0, "blocking work inside a task: \(counted.insideTasks) of \(counted.insideTasks + counted.outsideTasks)")
        #expect(backupCounted.insideTasks == 0)

        // The probe can tell: the blocking call, made from this task, is seen inside one.
        let blockingRead = { () throws -> String in try reopened.string(service: "api", account: "alice") }
        _ = try blockingRead()
        #expect(BlockingWorkProbe.counted(path).insideTasks > 0)
        await reopened.close()
    }

    /// Async calls made by many tasks at once on one vault all land, each once.
    @Test func concurrentTasksShareOneVault() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask { try await vault.set("value \(index)", service: "many", account: "\(index)") }
            }
            try await group.waitForAll()
        }
        #expect(try await vault.items(service: "many").count == 32)
        for index in 0..<32 {
            #expect(try await vault.string(service: "many", account: "\(index)") == "value \(index)")
        }
    }

    /// Errors come back typed, and the caller's own error from an async batch unchanged.
    @Test func errorsAreTheSame() async throws {
        struct Stop: Error {}
        let (vault, _, _) = try Fixtures.keyVault()
        await #expect(throws: VaultError.itemNotFound) { try await vault.secret(service: "s", account: "a") }
        await #expect(throws: VaultError.duplicateItem) {
            try await vault.add("x", service: "s", account: "a")
            try await vault.add("y", service: "s", account: "a")
        }
        await #expect(throws: Stop.self) {
            try await vault.batch { batch in
                try batch.set("never", service: "s", account: "b")
                throw Stop()
            }
        }
        #expect(try await vault.contains(service: "s", account: "b") == false)
    }
}
