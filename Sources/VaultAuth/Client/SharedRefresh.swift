import Synchronization

/// The one refresh in flight in a process, shared by every request that needs new tokens:
/// each waits for its outcome, and a waiter that is cancelled stops waiting
/// (``AuthError/Code/transient``, ``AuthErrorReason/cancelled``) without cancelling the
/// refresh the others share.
///
/// It also collects tokens the refresh obtained but must not keep (its session ended, or
/// someone else's tokens won): the refresh revokes them after its waiters have their
/// outcome, so a best-effort revoke never delays a request.
final class SharedRefresh: Sendable {
    typealias Outcome = Result<TokenSet, AuthError>

    /// The session epoch it started in.
    let epoch: UInt64

    private struct State {
        var outcome: Outcome?
        var waiters: [UInt64: CheckedContinuation<Outcome, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var orphans: [TokenSet] = []
    }

    private let state = Mutex(State())

    init(epoch: UInt64) {
        self.epoch = epoch
    }

    /// Waits for the outcome; returns `.transient(.cancelled)` at once if the calling task is
    /// (or gets) cancelled first.
    func outcome() async -> Outcome {
        let waiter = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let now: Outcome? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    // Checked under the lock: a cancellation handler that ran before this found
                    // no waiter to resume, so this is where that cancellation is seen.
                    if Task.isCancelled { return .failure(.transient(.cancelled)) }
                    state.waiters[waiter] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiters.removeValue(forKey: waiter) }
            continuation?.resume(returning: .failure(.transient(.cancelled)))
        }
    }

    /// Tokens to revoke once the outcome is delivered.
    func revokeAfterwards(_ orphan: TokenSet) {
        state.withLock { $0.orphans.append(orphan) }
    }

    /// Delivers `outcome` to every waiter, present and future.
    ///
    /// - Returns: the tokens collected by ``revokeAfterwards(_:)``, for the caller to revoke.
    func finish(_ outcome: Outcome) -> [TokenSet] {
        let (waiters, orphans) = state.withLock { state in
            state.outcome = outcome
            defer {
                state.waiters = [:]
                state.orphans = []
            }
            return (state.waiters, state.orphans)
        }
        for continuation in waiters.values { continuation.resume(returning: outcome) }
        return orphans
    }
}
