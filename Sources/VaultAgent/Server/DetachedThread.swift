#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread that runs one closure and is never joined: the agent's thread per
/// connection and its signal thread. Foundation's `Thread` did this before; `vault`
/// imports only FoundationEssentials, which has no `Thread` (Foundation would link ICU,
/// Benchmarks/README.md, "The agent").
enum DetachedThread {
    /// Starts `body` on a new thread, or returns the `errno` of `pthread_create`.
    static func start(_ body: @escaping @Sendable () -> Void) -> Int32? {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(&thread, nil, { context in
            let pointer: UnsafeMutableRawPointer? = context
            Unmanaged<Work>.fromOpaque(pointer!).takeRetainedValue().body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            return status
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return nil
    }

    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
