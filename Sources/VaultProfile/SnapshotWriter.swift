import Dispatch
import Synchronization

/// Runs storage operations one at a time, in the order they were submitted, on a thread
/// of their own.
///
/// Vault calls block while SQLite commits to disk; running them here keeps them off the
/// store's actor and off Swift's cooperative threads. The single FIFO queue is what
/// guarantees that a write submitted before a sign-out's delete can never land after it.
struct SnapshotWriter: Sendable {
    private let queue = DispatchQueue(label: "VaultProfile.SnapshotWriter")

    /// Runs `operation` after everything submitted earlier and returns its result.
    @discardableResult
    func perform<Value: Sendable>(_ operation: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try operation() })
            }
        }
    }

    /// Like ``perform(_:)``, but stops waiting after `deadline` and throws `timeoutError`.
    ///
    /// A blocked write cannot be interrupted: it keeps running, and if the process exits
    /// meanwhile, SQLite's atomic commit leaves either the old or the new snapshot.
    @discardableResult
    func perform<Value: Sendable>(deadline: Duration, timeoutError: any Error & Sendable, _ operation: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            queue.async {
                once.resume(with: Result { try operation() })
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + deadline.dispatchInterval) {
                once.resume(with: .failure(timeoutError))
            }
        }
    }
}

/// A continuation that the first of several racers resumes; the others are ignored.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(with result: Result<Value, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}

extension Duration {
    /// The duration for Dispatch, to the nanosecond; `.never` if it does not fit.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
