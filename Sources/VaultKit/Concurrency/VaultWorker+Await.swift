import Foundation

extension VaultWorker {
    /// Runs `work` on the worker thread and waits for it without blocking the caller's thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws(VaultError) -> Result) async throws(VaultError) -> Result {
        if VaultWorker.experimentCallerSpin {
            return try await runSpinning(work)
        }
        // Unsafe rather than checked: the job resumes exactly once, and the checked
        // variant's extra allocation is a measurable share of a 7 µs `get`.
        let outcome: Swift.Result<Result, VaultError> = await withUnsafeContinuation { continuation in
            submit {
                do throws(VaultError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    static let experimentCallerSpin = ProcessInfo.processInfo.environment["VAULTKIT_EXPERIMENT_CALLER_SPIN"] == "1"

    func runSpinning<Result: Sendable>(_ work: @escaping @Sendable () throws(VaultError) -> Result) async throws(VaultError) -> Result {
        let handoff = Handoff<Result>()
        submit {
            do throws(VaultError) {
                handoff.fulfill(.success(try work()))
            } catch {
                handoff.fulfill(.failure(error))
            }
        }
        if let outcome = handoff.spinForResult(upTo: VaultWorker.callerSpinBound) { return try outcome.get() }
        return try await handoff.wait().get()
    }

    static let callerSpinBound: Duration = .microseconds(25)
}
