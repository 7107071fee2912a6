#if DEBUG
import Synchronization

/// Test hook (debug builds only): counts the blocking work (every SQLite statement, every
/// Argon2id run) done for a watched vault path, split by the thread it ran on: outside
/// any Swift task (an ordinary thread, or a vault's queue running an async call's work),
/// inside a task running on a vault's queue (``Vault/executor``), or inside a task on any
/// other thread, i.e. on the cooperative pool. The async API's tests watch their own
/// vault's path to show structurally that none of its blocking work runs on the pool.
///
/// Watching is per path, so tests running in parallel on other vaults neither see nor
/// disturb each other, and an unwatched process pays one atomic load per statement.
enum BlockingWorkProbe {
    struct Counts: Sendable, Equatable {
        /// On a thread outside any task.
        var outsideTasks = 0
        /// Inside a task that runs on a vault's own queue: a thread VaultKit owns.
        var onVaultExecutor = 0
        /// Inside a task on any other thread: the cooperative pool, where blocking work must not run.
        var insideTasks = 0
    }

    private static let watchedCount = Atomic<Int>(0)
    private static let counts = Mutex<[String: Counts]>([:])

    /// Starts counting the blocking work done for `path` (and for files whose path starts with it).
    static func watch(_ path: String) {
        counts.withLock { $0[path] = Counts() }
        watchedCount.add(1, ordering: .sequentiallyConsistent)
    }

    /// Stops counting for `path` and returns what was counted.
    static func stopWatching(_ path: String) -> Counts {
        let result = counts.withLock { $0.removeValue(forKey: path) } ?? Counts()
        watchedCount.subtract(1, ordering: .sequentiallyConsistent)
        return result
    }

    /// What was counted for `path` so far.
    static func counted(_ path: String) -> Counts {
        counts.withLock { $0[path] } ?? Counts()
    }

    static func note(_ path: String) {
        guard watchedCount.load(ordering: .relaxed) > 0 else { return }
        // A vault's thread first: a task running there is not on the pool.
        let onVaultQueue = VaultExecutor.isOnAVaultQueue
        let inTask = withUnsafeCurrentTask { $0 != nil }
        counts.withLock { counts in
            for key in counts.keys where path.hasPrefix(key) {
                switch (inTask, onVaultQueue) {
                case (false, _): counts[key]!.outsideTasks += 1
                case (true, true): counts[key]!.onVaultExecutor += 1
                case (true, false): counts[key]!.insideTasks += 1
                }
            }
        }
    }
}
#endif
