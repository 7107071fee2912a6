import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How long a ``VaultBatch`` may be used: while its closure runs, on the closure's
/// thread. Closed when the closure returns, so a batch kept beyond it cannot write
/// rows outside any transaction (and leave the manifest behind them).
final class BatchScope: Sendable {
    let isOpen = Atomic<Bool>(true)
    let thread = ThreadIdentity.current

    func close() {
        isOpen.store(false, ordering: .releasing)
    }
}

/// A number that names the calling thread while it runs (never 0).
enum ThreadIdentity {
    static var current: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
