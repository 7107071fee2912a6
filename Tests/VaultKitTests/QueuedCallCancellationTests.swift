import Dispatch
import Testing
import TestTraits
import TestSupport
import VaultKit

/// An async call whose task is cancelled while it waits behind other work on the vault's
/// queue never runs: nobody waits for its result any more. One that started completes,
/// and closing runs whatever happens.
@Suite(.offCooperativePool) struct QueuedCallCancellationTests {
    /// Holds the vault's queue inside a batch until ``release()``; ``start(_:)`` returns
    /// once the batch's closure is running, so every call made after it is queued behind.
    final class QueueBlocker: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let running: Task<Void, any Error>
        private let started: AsyncStream<Void>

        init(_ vault: Vault) {
            let (started, signal) = AsyncStream<Void>.makeStream()
            self.started = started
            let gate = gate
            running = Task {
                try await vault.batch { _ in
                    signal.yield()
                    gate.wait()
                }
            }
        }

        func waitUntilHolding() async {
            for await _ in started { return }
        }

        func release() async throws {
            gate.signal()
            try await running.value
        }
    }

    @Test func aCallCancelledWhileQueuedNeverWrites() async throws {
        let vault = try await Vault.create(at: Fixtures.vaultPath(), passphrase: "correct horse", kdf: testKDF)
        let blocker = QueueBlocker(vault)
        await blocker.waitUntilHolding()
        let queued = Task { try await vault.set("never", service: "api", account: "alice") }
        queued.cancel()
        try await blocker.release()
        await #expect(throws: VaultError.cancelled) { try await queued.value }
        #expect(try await vault.contains(service: "api", account: "alice") == false)
        await vault.close()
    }

    @Test func aBatchCancelledWhileQueuedNeverRunsItsClosure() async throws {
        let vault = try await Vault.create(at: Fixtures.vaultPath(), passphrase: "correct horse", kdf: testKDF)
        let blocker = QueueBlocker(vault)
        await blocker.waitUntilHolding()
        let queued = Task {
            try await vault.batch { batch in try batch.set("never", service: "api", account: "bob") }
        }
        queued.cancel()
        try await blocker.release()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(try await vault.contains(service: "api", account: "bob") == false)
        await vault.close()
    }

    @Test func aCallThatHasStartedCompletesWhenItsTaskIsCancelled() async throws {
        let vault = try await Vault.create(at: Fixtures.vaultPath(), passphrase: "correct horse", kdf: testKDF)
        let (started, signal) = AsyncStream<Void>.makeStream()
        let gate = DispatchSemaphore(value: 0)
        let writing = Task {
            try await vault.batch { batch in
                try batch.set("kept", service: "api", account: "carol")
                signal.yield()
                gate.wait()
            }
        }
        for await _ in started { break }
        writing.cancel()
        gate.signal()
        try await writing.value
        #expect(try await vault.string(service: "api", account: "carol") == "kept")
        await vault.close()
    }

    @Test func closingACancelledTasksVaultStillCloses() async throws {
        let vault = try await Vault.create(at: Fixtures.vaultPath(), passphrase: "correct horse", kdf: testKDF)
        let closing = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await vault.close()
        }
        await closing.value
        #expect(throws: VaultError.closed) { try vault.contains(service: "api", account: "alice") }
    }
}
