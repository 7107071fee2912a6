import Testing
import TestSupport

/// Puts a suite whose tests block their thread (child processes, disk syncs, polling)
/// on ``BlockingTestExecutor``, off the cooperative pool that the suites waiting on
/// timers, servers and debounced writes need: the whole suite then runs as one process.
public struct OffCooperativePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Each test case takes a turn; the suite itself only groups them.
        guard testCase != nil else { return try await function() }
        try await BlockingTestExecutor.shared.run(function)
    }
}

extension Trait where Self == OffCooperativePool {
    /// The suite's tests block their thread: run them off the cooperative pool.
    public static var offCooperativePool: Self { Self() }
}
