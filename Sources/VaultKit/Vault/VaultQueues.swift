import Dispatch
import Synchronization

/// The queues blocking vault work runs on for async callers.
///
/// Dispatch queues, not the cooperative pool: a serial queue on Linux and Darwin gets a
/// thread of its own when the shared ones are busy (it is "overcommit"), so a vault
/// waiting for fsync or Argon2id never holds back other tasks.
///
/// Work whose task is cancelled while it waits for its turn is skipped, as swift-nio's
/// `NIOThreadPool.runIfActive` does: nobody waits for its result any more, and behind a
/// long write or an Argon2id derivation a queue can hold many such calls. Work that has
/// started runs to its end, so a write is never abandoned halfway.
enum VaultQueues {
    /// Creating and opening: Argon2id for up to seconds. Each call gets a serial queue
    /// of its own (several can run at once, each on its own thread).
    static func opening() -> DispatchQueue { DispatchQueue(label: "VaultKit.opening") }

    /// Runs `work` on `queue` and waits for it without blocking the caller's thread.
    ///
    /// - Parameter cancelled: what to throw instead of running `work` when the calling
    ///   task is cancelled before `work` starts (``VaultError/cancelled``, or
    ///   `CancellationError` where the caller's closure throws any error).
    static func run<Result: Sendable, Failure: Error>(
        on queue: DispatchQueue, unlessCancelledThrowing cancelled: Failure, _ work: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let turn = QueuedTurn()
        // Unsafe rather than checked: every path below resumes exactly once, and the
        // checked variant's extra allocation is a measurable share of a 7 µs `get`.
        let outcome: Swift.Result<Result, Failure> = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                queue.async {
                    guard turn.start() else { return continuation.resume(returning: .failure(cancelled)) }
                    do throws(Failure) {
                        continuation.resume(returning: .success(try work()))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        } onCancel: {
            turn.cancel()
        }
        return try outcome.get()
    }

    /// Runs `work` on `queue` even when the calling task is cancelled: for work that must
    /// happen whoever waits for it (closing wipes the keys).
    static func run<Result: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Result) async -> Result {
        await withUnsafeContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}

/// Whether a queued piece of work may still start: the first of its start and its task's
/// cancellation wins, so work that started is not reported as cancelled, nor the reverse.
private final class QueuedTurn: Sendable {
    private enum State: UInt8 { case waiting, started, cancelled }
    private let state = Atomic<UInt8>(State.waiting.rawValue)

    /// `true` when the work may run now; `false` when its task was cancelled first.
    func start() -> Bool {
        state.compareExchange(expected: State.waiting.rawValue, desired: State.started.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    func cancel() {
        _ = state.compareExchange(expected: State.waiting.rawValue, desired: State.cancelled.rawValue, ordering: .acquiringAndReleasing)
    }
}
