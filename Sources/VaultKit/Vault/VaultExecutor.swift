import Dispatch
import Synchronization

/// A task executor that runs tasks on a vault's own serial queue, so that the vault's
/// `async` calls made from those tasks do their blocking work right where the task
/// already is: no continuation, no hand-off to another thread and back.
///
/// Every ``Vault`` has one, ``Vault/executor``. An `async` call from anywhere else (the
/// cooperative pool, an actor, a NIO event loop) hops to the vault's queue and back,
/// two thread wake-ups that cost more than a cached read itself. A hot loop or a request
/// handler that makes many calls on one vault can instead run on the vault's queue:
///
/// ```swift
/// let tokens = try await withTaskExecutorPreference(vault.executor) {
///     var tokens: [String] = []
///     for user in users {
///         tokens.append(try await vault.string(service: "api.example.com", account: user))
///     }
///     return tokens
/// }
/// ```
///
/// `Task(executorPreference: vault.executor) { ... }` starts a task there.
///
/// The cost: everything such a task does between its awaits runs on the vault's serial
/// queue, so it waits for, and holds back, every other call on that vault. Keep only
/// vault work there; call other vaults, actors and the network as usual (their calls hop,
/// and the task comes back to this queue afterwards). The preference applies to
/// nonisolated code: a closure isolated to an actor runs on the actor's executor instead.
///
/// Once the vault is closed or released, the executor runs the jobs it still receives on
/// Swift's global concurrent executor: tasks that prefer it keep running (their vault
/// calls throw ``VaultError/closed``), and no thread stays reserved for a closed vault.
public final class VaultExecutor: TaskExecutor {
    /// The vault's serial queue: the blocking work of its `async` calls from elsewhere,
    /// and this executor's jobs, in one order.
    let queue = DispatchQueue(label: "VaultKit.Vault")
    /// Set when the vault is closed or released; later jobs go to the global executor.
    private let retired = Atomic<Bool>(false)

    /// Marks a queue as a vault's; the value names which vault's.
    private static let queueOwner = DispatchSpecificKey<ObjectIdentifier>()

    init() {
        queue.setSpecific(key: Self.queueOwner, value: ObjectIdentifier(self))
    }

    /// Queues `job` behind the vault's pending work, or hands it to the global executor
    /// once the vault is closed: Swift requires every enqueued job to run.
    public func enqueue(_ job: consuming ExecutorJob) {
        guard !retired.load(ordering: .acquiring) else {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        let job = UnownedJob(job)
        // The block holds `self`, so the executor outlives every job queued on it.
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Whether the current thread is running this vault's queue: then the vault's
    /// `async` calls run their work inline, as the queue would.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.queueOwner) == ObjectIdentifier(self)
    }

    /// Whether the current thread is running any vault's queue (a thread VaultKit owns).
    static var isOnAVaultQueue: Bool {
        DispatchQueue.getSpecific(key: queueOwner) != nil
    }

    /// Stops taking jobs onto the queue: the vault is closed or released.
    func retire() {
        retired.store(true, ordering: .releasing)
    }
}
