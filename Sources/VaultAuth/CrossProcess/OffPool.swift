import Dispatch

/// Runs blocking work (vault reads and durable writes, a wait for another process's lock) off
/// Swift's cooperative pool and resumes the caller when it is done.
///
/// The cooperative pool has one thread per core; a `flock` or `fsync` there stalls every task
/// scheduled on that thread. Each call gets its own serial dispatch queue: serial queues run
/// on dispatch's overcommit threads, which are added when others block, so two lock waits
/// can never starve the lock holder of the thread it needs to write the vault and let go (a
/// concurrent queue's workers are capped at the core count, and that deadlocked).
enum OffPool {
    static func run<Success: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Success
    ) async throws(Failure) -> Success {
        let result: Result<Success, Failure> = await withCheckedContinuation { continuation in
            DispatchQueue(label: "VaultAuth.blocking").async {
                continuation.resume(returning: Result { () throws(Failure) -> Success in try body() })
            }
        }
        return try result.get()
    }
}
