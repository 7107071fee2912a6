import Foundation
import Synchronization

/// The one thread a vault's async calls run their blocking work on (SQLite, fsync,
/// Argon2id), one job at a time, in the order they were submitted.
///
/// Why not a serial `DispatchQueue`, as before: an idle dispatch thread parks at once, so
/// every async call paid a futex wake to start its read. This thread instead watches for
/// work for ``spinBound`` after its last job before it parks: a caller that awaits calls
/// one after another finds it awake. The watch is bounded and yields the core on every
/// turn (`sched_yield`), so an idle vault costs nothing after it. All jobs queued when the
/// thread wakes run in one go (one wake-up for many waiting tasks).
///
/// The thread starts on the first job (a vault used only through the blocking API never
/// has one) and ends when the vault is closed or released: ``stop()``, which `Vault.close()`
/// and this object's `deinit` call. Jobs submitted after that run on a one-off dispatch
/// queue instead (they only find the vault closed).
final class VaultWorker: Sendable {
    /// The state the thread itself holds on to: it outlives this handle until the thread exits.
    let core: Core

    init(name: String = "VaultKit.Vault") {
        core = Core(name: name)
    }

    deinit {
        core.stop()
    }

    /// Runs `job` on the worker thread after every job submitted before it.
    func submit(_ job: @escaping Job) {
        core.submit(job)
    }

    /// Ends the thread once the jobs already queued have run.
    func stop() {
        core.stop()
    }

    typealias Job = @Sendable () -> Void

    /// How long the thread looks for more work before it parks: longer than the usual
    /// gap between one awaited call's end and the next call (the caller's task resuming
    /// on another thread), short enough to be nothing against an idle second.
    static let spinBound: Duration = .microseconds(50)

    final class Core: Sendable {
        private enum Phase {
            case notStarted, running, stopping, stopped
        }

        private struct Queue {
            var jobs: [Job] = []
            var phase = Phase.notStarted
        }

        private let name: String
        private let queue = Mutex(Queue())
        /// Jobs queued and not yet taken: the spinning thread's cheap check.
        private let pending = Atomic<Int>(0)
        /// The thread is parked, or about to: a submitter must signal `parking`.
        private let parked = Atomic<Bool>(false)
        private let stopRequested = Atomic<Bool>(false)
        private let started = Atomic<Bool>(false)
        /// The thread has returned from its loop (it ended, or never started after a stop).
        private let exited = Atomic<Bool>(false)
        private let parking = NSCondition()
        /// Signalled once, when the thread leaves its loop (tests wait for it).
        private let exit = NSCondition()

        init(name: String) {
            self.name = name
        }

        func submit(_ job: @escaping Job) {
            enum Then { case signal, start, elsewhere }
            let then = queue.withLock { (queue) -> Then in
                switch queue.phase {
                case .stopping, .stopped:
                    return .elsewhere
                case .notStarted:
                    queue.jobs.append(job)
                    pending.add(1, ordering: .sequentiallyConsistent)
                    queue.phase = .running
                    return .start
                case .running:
                    queue.jobs.append(job)
                    // Counted under the lock, so it never lags the thread's subtraction.
                    pending.add(1, ordering: .sequentiallyConsistent)
                    return .signal
                }
            }
            switch then {
            case .elsewhere:
                DispatchQueue(label: name).async(execute: job)
            case .start:
                startThread()
            case .signal:
                // Sequentially consistent with the thread's `parked` store and `pending`
                // load: either it sees this job before it waits, or this sees it parked.
                if parked.load(ordering: .sequentiallyConsistent) { wake() }
            }
        }

        func stop() {
            let neverStarted = queue.withLock { (queue) -> Bool in
                switch queue.phase {
                case .notStarted:
                    queue.phase = .stopped
                    return true
                case .running:
                    queue.phase = .stopping
                    return false
                case .stopping, .stopped:
                    return false
                }
            }
            if neverStarted {
                markExited()
                return
            }
            stopRequested.store(true, ordering: .sequentiallyConsistent)
            if parked.load(ordering: .sequentiallyConsistent) { wake() }
        }

        private func startThread() {
            started.store(true, ordering: .releasing)
            let thread = Thread { [self] in
                run()
                markExited()
            }
            thread.name = name
            thread.start()
        }

        private func run() {
            // Two arrays swapped in turn, so taking the queue allocates nothing.
            var taken: [Job] = []
            while true {
                let ended = queue.withLock { (queue) -> Bool in
                    swap(&taken, &queue.jobs)
                    pending.subtract(taken.count, ordering: .relaxed)
                    guard taken.isEmpty, queue.phase == .stopping else { return false }
                    queue.phase = .stopped
                    return true
                }
                if ended { return }
                if !taken.isEmpty {
                    for job in taken { job() }
                    taken.removeAll(keepingCapacity: true)
                    continue
                }
                if spinForWork() { continue }
                park()
            }
        }

        /// Watches `pending` for up to ``VaultWorker/spinBound``; true when work arrived.
        private func spinForWork() -> Bool {
            let deadline = ContinuousClock.now + VaultWorker.spinBound
            repeat {
                if pending.load(ordering: .acquiring) > 0 || stopRequested.load(ordering: .relaxed) { return true }
                sched_yield()
            } while ContinuousClock.now < deadline
            return false
        }

        private func park() {
            parking.lock()
            parked.store(true, ordering: .sequentiallyConsistent)
            while pending.load(ordering: .sequentiallyConsistent) == 0, !stopRequested.load(ordering: .sequentiallyConsistent) {
                parking.wait()
            }
            parked.store(false, ordering: .sequentiallyConsistent)
            parking.unlock()
        }

        private func wake() {
            parking.lock()
            parking.signal()
            parking.unlock()
        }

        private func markExited() {
            exit.lock()
            exited.store(true, ordering: .releasing)
            exit.broadcast()
            exit.unlock()
        }

        // MARK: For tests

        /// The thread is parked (it spun for its bound and found nothing).
        var isParked: Bool { parked.load(ordering: .acquiring) }

        /// A thread was started (by the first job).
        var hasStarted: Bool { started.load(ordering: .acquiring) }

        /// The thread has left its loop for good (or was stopped before it started).
        var hasExited: Bool { exited.load(ordering: .acquiring) }

        /// Waits until the thread has left its loop, or `limit` passed; returns whether it has.
        func waitUntilExited(limit: TimeInterval) -> Bool {
            let deadline = Date(timeIntervalSinceNow: limit)
            exit.lock()
            defer { exit.unlock() }
            while !exited.load(ordering: .acquiring) {
                guard exit.wait(until: deadline) else { return exited.load(ordering: .acquiring) }
            }
            return true
        }
    }
}
