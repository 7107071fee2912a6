import Foundation
import Synchronization

/// One call's outcome, handed from the worker thread to the task that awaits it: the
/// task may look for it for a bounded moment before it suspends.
final class Handoff<Value: Sendable>: Sendable {
    typealias Outcome = Result<Value, VaultError>

    private enum State {
        case pending
        case ready(Outcome)
        case waiting(UnsafeContinuation<Outcome, Never>)
        case taken
    }

    private let isReady = Atomic<Bool>(false)
    private let state = Mutex(State.pending)

    /// Called once, on the worker thread.
    func fulfill(_ outcome: Outcome) {
        let waiter = state.withLock { (state) -> UnsafeContinuation<Outcome, Never>? in
            if case .waiting(let continuation) = state {
                state = .taken
                return continuation
            }
            state = .ready(outcome)
            return nil
        }
        isReady.store(true, ordering: .releasing)
        waiter?.resume(returning: outcome)
    }

    /// The outcome, if it arrives within `bound`.
    func spinForResult(upTo bound: Duration) -> Outcome? {
        let deadline = ContinuousClock.now + bound
        repeat {
            if isReady.load(ordering: .acquiring) { return take() }
            sched_yield()
        } while ContinuousClock.now < deadline
        return nil
    }

    private func take() -> Outcome? {
        state.withLock { (state) -> Outcome? in
            guard case .ready(let outcome) = state else { return nil }
            state = .taken
            return outcome
        }
    }

    /// Suspends until the outcome arrives (at once if it already has).
    func wait() async -> Outcome {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Outcome, Never>) in
            let ready = state.withLock { (state) -> Outcome? in
                if case .ready(let outcome) = state {
                    state = .taken
                    return outcome
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
