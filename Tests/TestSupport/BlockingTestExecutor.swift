import Dispatch
import Foundation
import Synchronization

/// Runs tests whose bodies block their thread (waiting for child processes, disk syncs,
/// Argon2id, polling with `usleep`) off Swift's cooperative thread pool, a few at a time.
///
/// Why: the cooperative pool has one thread per core (two on the test machine). Test
/// bodies that block there leave no thread for the tests that wait on timers, servers
/// and debounced writes, whose timeouts then fire; the suite had to run in two processes.
/// Here each admitted test prefers this executor, whose jobs run on Dispatch's global
/// queue: a thread it blocks is not one the pool needs, and Dispatch adds threads when
/// its own block. At most ``width`` such tests run at once, as many as the pool's
/// threads used to bound them to, so the machine is not flooded with child processes.
public final class BlockingTestExecutor: TaskExecutor {
    /// The one executor every blocking suite shares, so ``width`` bounds them all together.
    public static let shared = BlockingTestExecutor(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// How many admitted tests run at once.
    public let width: Int
    private let slots: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    public init(width: Int) {
        self.width = width
        slots = Mutex((width, []))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }

    /// Runs `body` on this executor once fewer than ``width`` other bodies run: waiting for
    /// a turn suspends, it blocks no thread.
    public func run(_ body: () async throws -> Void) async throws {
        await admit()
        defer { leave() }
        try await withTaskExecutorPreference(self) { try await body() }
    }

    private func admit() async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let admitted = slots.withLock { slots in
                guard slots.free > 0 else {
                    slots.waiting.append(turn)
                    return false
                }
                slots.free -= 1
                return true
            }
            if admitted { turn.resume() }
        }
    }

    private func leave() {
        let next = slots.withLock { slots -> CheckedContinuation<Void, Never>? in
            guard !slots.waiting.isEmpty else {
                slots.free += 1
                return nil
            }
            return slots.waiting.removeFirst()
        }
        next?.resume()
    }
}
