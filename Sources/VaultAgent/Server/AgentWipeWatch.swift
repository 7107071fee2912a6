#if DEBUG
import VaultKit
import Synchronization

/// Debug builds only: counts VaultKit's secure buffers (keys, secrets) as they are
/// released, after their wipe, and how many still held a non-zero byte; the agent's log
/// then shows that letting go of a vault wiped its keys (AgentTests read it).
enum AgentWipeWatch {
    private static let counts = Mutex((released: 0, notZeroed: 0))

    static func install() {
        SecureBufferReleaseWatch.install { notZeroed in
            counts.withLock { $0.released += 1; if notZeroed { $0.notZeroed += 1 } }
        }
    }

    static func snapshot() -> (released: Int, notZeroed: Int) { counts.withLock { $0 } }

    /// What was released since `before`, for the log.
    static func report(since before: (released: Int, notZeroed: Int)) -> String {
        let now = snapshot()
        return " (debug: \(now.released - before.released) secure buffers wiped, \(now.notZeroed - before.notZeroed) not zeroed)"
    }
}
#else
/// Release builds: nothing is watched and nothing is added to the log.
enum AgentWipeWatch {
    static func install() {}
    static func snapshot() -> (released: Int, notZeroed: Int) { (0, 0) }
    static func report(since before: (released: Int, notZeroed: Int)) -> String { "" }
}
#endif
