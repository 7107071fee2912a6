#if DEBUG
/// Debug builds only: lets the `vault` agent count the secure buffers (keys, secrets)
/// VaultKit releases and whether each was wiped, without `@testable import`: its log then
/// shows that letting go of a vault wiped its keys (AgentTests read it). The observer
/// sees one flag per release, never the bytes.
package enum SecureBufferReleaseWatch {
    /// Calls `observer` after each secure buffer is wiped, before it is freed, with
    /// whether any byte was still non-zero; replaces any earlier observer.
    package static func install(_ observer: @escaping @Sendable (_ notZeroed: Bool) -> Void) {
        SecureBuffer.releaseObserver.withLock { current in
            current = { bytes in observer(bytes.contains { $0 != 0 }) }
        }
    }
}
#endif
