import Foundation

/// Runs blocking work (vault reads and durable writes, a wait for another process's lock)
/// on threads of its own and resumes the caller when it is done.
///
/// Swift's cooperative pool has one thread per core; a `flock` or `fsync` there stalls every
/// task scheduled on that thread, including the HTTP work of other clients.
enum OffPool {
    private static let queue = DispatchQueue(label: "VaultAuth.blocking", attributes: .concurrent)

    static func run<Success: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Success
    ) async throws(Failure) -> Success {
        let result: Result<Success, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> Success in try body() })
            }
        }
        return try result.get()
    }
}
