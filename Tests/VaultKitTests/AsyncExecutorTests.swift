import Dispatch
import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// `Vault.executor`: a task running on the vault's own queue makes the vault's async
/// calls inline (the probe sees their work inside a task on a vault's thread, none on the
/// pool, none hopped to a plain queue block), while calls from anywhere else, and calls to
/// another vault, still hop. Closing the vault moves later jobs off its queue.
@Suite(.offCooperativePool) struct AsyncExecutorTests {
    @Test func twinsRunInlineOnTheVaultsExecutorAndHopElsewhere() async throws {
        let (vault, path, _) = try Fixtures.keyVault()
        BlockingWorkProbe.watch(path)
        defer { _ = BlockingWorkProbe.stopWatching(path) }

        let read = try await withTaskExecutorPreference(vault.executor) { () async throws -> String in
            #expect(vault.executor.isCurrent)
            try await vault.set("s3cr3t", service: "api", account: "alice")
            try await vault.add("two", service: "api", account: "bob")
            try await vault.service("api").update("s3cr3t 2", account: "alice")
            try await vault.batch { batch in try batch.set("three", service: "api", account: "carol") }
            #expect(try await vault.items(service: "api").count == 3)
            #expect(try await vault.entry(service: "api", account: "bob") != nil)
            #expect(try await vault.withSecret(service: "api", account: "bob") { $0.count } == 3)
            #expect(try await vault.delete(service: "api", account: "carol"))
            #expect(vault.executor.isCurrent, "no await above left the vault's queue")
            return try await vault.string(service: "api", account: "alice")
        }
        #expect(read == "s3cr3t 2")
        let inline = BlockingWorkProbe.stopWatching(path)
        #expect(inline.onVaultExecutor > 10)
        #expect(inline.outsideTasks == 0, "a call hopped to a queue block: \(inline.outsideTasks) statements")
        #expect(inline.insideTasks == 0, "blocking work on the pool: \(inline.insideTasks) statements")

        // The same calls from this task, on the pool, hop to the vault's queue.
        BlockingWorkProbe.watch(path)
        #expect(!vault.executor.isCurrent)
        #expect(try await vault.string(service: "api", account: "alice") == "s3cr3t 2")
        try await vault.set("again", service: "api", account: "bob")
        let hopped = BlockingWorkProbe.counted(path)
        #expect(hopped.outsideTasks > 0)
        #expect(hopped.onVaultExecutor == 0)
        #expect(hopped.insideTasks == 0)
        await vault.close()
    }

    /// A task on one vault's executor calling another vault hops to that vault's queue,
    /// and comes back to its own queue afterwards.
    @Test func anotherVaultsTwinsStillHop() async throws {
        let (home, homePath, _) = try Fixtures.keyVault("executor-home")
        let (other, otherPath, _) = try Fixtures.keyVault("executor-other")
        BlockingWorkProbe.watch(homePath)
        BlockingWorkProbe.watch(otherPath)
        defer {
            _ = BlockingWorkProbe.stopWatching(homePath)
            _ = BlockingWorkProbe.stopWatching(otherPath)
        }

        try await withTaskExecutorPreference(home.executor) {
            for index in 0..<5 {
                try await other.set("other \(index)", service: "s", account: "\(index)")
                #expect(home.executor.isCurrent, "back on the home vault's queue after the hop")
                #expect(!other.executor.isCurrent)
                try await home.set(try await other.string(service: "s", account: "\(index)"), service: "s", account: "\(index)")
            }
        }
        #expect(try await home.string(service: "s", account: "4") == "other 4")
        let homeCounts = BlockingWorkProbe.counted(homePath)
        let otherCounts = BlockingWorkProbe.counted(otherPath)
        #expect(homeCounts.onVaultExecutor > 0)
        #expect(otherCounts.onVaultExecutor == 0, "the other vault's work ran on the home vault's thread")
        #expect(otherCounts.outsideTasks > 0)
        #expect(homeCounts.insideTasks == 0 && otherCounts.insideTasks == 0)
    }

    /// The blocking API called by a task on the executor runs there without deadlock, and
    /// a batch closure calling its own vault still fails fast.
    @Test func blockingCallsAndReentryOnTheExecutor() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("one", service: "s", account: "a")
        try await withTaskExecutorPreference(vault.executor) {
            let blockingRead = { () throws -> String in try vault.string(service: "s", account: "a") }
            #expect(try blockingRead() == "one")
            try await vault.batch { batch in
                try batch.set("two", service: "s", account: "b")
                #expect(throws: VaultError.reentrantCall) { try vault.string(service: "s", account: "a") }
            }
            #expect(try await vault.string(service: "s", account: "b") == "two")
        }
    }

    /// `Task(executorPreference:)` starts a task on the vault's queue.
    @Test func aTaskStartedOnTheExecutor() async throws {
        let (vault, path, _) = try Fixtures.keyVault()
        try await vault.set("one", service: "s", account: "a")
        BlockingWorkProbe.watch(path)
        defer { _ = BlockingWorkProbe.stopWatching(path) }
        let task = Task(executorPreference: vault.executor) { () async throws -> (String, Bool) in
            (try await vault.string(service: "s", account: "a"), vault.executor.isCurrent)
        }
        let (value, onQueue) = try await task.value
        #expect(value == "one")
        #expect(onQueue)
        let counted = BlockingWorkProbe.counted(path)
        #expect(counted.onVaultExecutor > 0)
        #expect(counted.outsideTasks == 0 && counted.insideTasks == 0)
    }

    /// Calls from tasks on the executor and from the pool, on one vault at once, all land.
    @Test func executorAndPoolCallersShareOneVault() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                let write = { @Sendable () async throws in
                    try await vault.set("value \(index)", service: "many", account: "\(index)")
                    #expect(try await vault.string(service: "many", account: "\(index)") == "value \(index)")
                }
                if index.isMultiple(of: 2) {
                    group.addTask(executorPreference: vault.executor, operation: write)
                } else {
                    group.addTask(operation: write)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await vault.items(service: "many").count == 32)
    }

    /// Jobs queued on the executor before `close` still run there; jobs that arrive after
    /// it run on the global executor, and every task finishes, its vault calls `closed`.
    @Test func closingWithTasksQueuedOnTheExecutor() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("one", service: "s", account: "a")
        // Hold the vault's queue, so the tasks below wait on it.
        let gate = DispatchSemaphore(value: 0)
        vault.executor.queue.async { gate.wait() }
        let queued = (0..<4).map { _ in Self.readOnItsExecutor(vault) }
        // The blocking close: the async one would wait for the held queue.
        let closeNow = { vault.close() }
        closeNow()
        let late = Self.readOnItsExecutor(vault)
        gate.signal()
        let lateOutcome = await late.value
        #expect(!lateOutcome.ranOnQueue, "a job enqueued after close runs on the global executor")
        #expect(lateOutcome.error == .closed)
        for task in queued {
            let outcome = await task.value
            #expect(outcome.ranOnQueue, "a job queued before close still runs on the vault's queue")
            #expect(outcome.error == .closed)
        }
    }

    /// A task on `vault`'s executor that reads an item: where it started, and the error.
    private static func readOnItsExecutor(_ vault: Vault) -> Task<(ranOnQueue: Bool, error: VaultError?), Never> {
        Task(executorPreference: vault.executor) {
            let ranOnQueue = vault.executor.isCurrent
            do throws(VaultError) {
                _ = try await vault.string(service: "s", account: "a")
                return (ranOnQueue, nil)
            } catch {
                return (ranOnQueue, error)
            }
        }
    }

    /// README's and the DocC article's example, run as written.
    @Test func theReadmeExampleRuns() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("a-token", service: "api.example.com", account: "alice")
        try await vault.set("b-token", service: "api.example.com", account: "bob")

        let tokens = try await withTaskExecutorPreference(vault.executor) {
            var tokens: [String: String] = [:]
            for user in ["alice", "bob"] {
                tokens[user] = try await vault.string(service: "api.example.com", account: user)
            }
            return tokens
        }
        #expect(tokens == ["alice": "a-token", "bob": "b-token"])
    }

    /// Releasing the vault retires its executor too: a task that still prefers it runs.
    @Test func anExecutorOutlivingItsVault() async throws {
        weak var released: Vault?
        let executor: VaultExecutor
        do {
            let (vault, _, _) = try Fixtures.keyVault()
            released = vault
            executor = vault.executor
        }
        #expect(released == nil)
        let ranOnQueue = await Task(executorPreference: executor) { executor.isCurrent }.value
        #expect(!ranOnQueue)
    }
}
