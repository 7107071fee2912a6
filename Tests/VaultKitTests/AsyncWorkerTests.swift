import Foundation
import Synchronization
import Testing
@testable import VaultKit

/// The thread a vault's async calls run on: jobs in submission order and one at a time,
/// the thread parks when idle (its spin is bounded) and ends when the vault is closed or
/// released, so no vault leaves a thread behind.
@Suite struct AsyncWorkerTests {
    /// Generous: the thread ends within microseconds; this only keeps a failure from hanging.
    static let exitLimit: TimeInterval = 30

    @Test func jobsRunInSubmissionOrderOneAtATime() async {
        let worker = VaultWorker(name: "test")
        let log = Mutex<[Int]>([])
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let count = 2_000
        await withUnsafeContinuation { (done: UnsafeContinuation<Void, Never>) in
            for index in 0..<count {
                worker.submit {
                    if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlapped.store(true, ordering: .relaxed) }
                    log.withLock { $0.append(index) }
                    running.subtract(1, ordering: .acquiringAndReleasing)
                    if index == count - 1 { done.resume() }
                }
            }
        }
        #expect(log.withLock { $0 } == Array(0..<count))
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
        worker.stop()
        #expect(worker.core.waitUntilExited(limit: Self.exitLimit))
    }

    @Test func threadEndsWhenTheVaultIsClosed() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("v", service: "s", account: "a")
        let core = vault.worker.core
        #expect(!core.hasExited)
        let closeBlocking = { vault.close() }
        closeBlocking()
        #expect(core.waitUntilExited(limit: Self.exitLimit))
        // Calls after closing still answer, on a queue of their own: the vault is closed.
        await #expect(throws: VaultError.closed) { try await vault.string(service: "s", account: "a") }
    }

    @Test func threadEndsAfterAnAsyncClose() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("v", service: "s", account: "a")
        await vault.close()
        #expect(vault.worker.core.waitUntilExited(limit: Self.exitLimit))
    }

    @Test func threadEndsWhenTheVaultIsReleased() async throws {
        let core = try await Self.usedAndDropped()
        #expect(core.waitUntilExited(limit: Self.exitLimit))
    }

    /// Opens a vault, starts its thread, and releases the vault without closing it.
    private static func usedAndDropped() async throws -> VaultWorker.Core {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("v", service: "s", account: "a")
        #expect(try await vault.string(service: "s", account: "a") == "v")
        return vault.worker.core
    }

    /// The spin after the last job is bounded: an idle thread parks, and wakes for the next call.
    @Test func idleThreadParksAndWakes() async throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try await vault.set("v", service: "s", account: "a")
        let core = vault.worker.core
        let deadline = Date(timeIntervalSinceNow: Self.exitLimit)
        while !core.isParked, Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(core.isParked)
        #expect(try await vault.string(service: "s", account: "a") == "v")
        await vault.close()
    }

    /// A vault used only through the blocking API never starts a thread.
    @Test func blockingUseStartsNoThread() throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try vault.set("v", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "v")
        #expect(!vault.worker.core.hasStarted)
        vault.close()
        #expect(vault.worker.core.hasExited)
    }
}
