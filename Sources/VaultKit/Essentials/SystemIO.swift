#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `read(2)` and `write(2)` under names no method shadows. Code inside a type with its
/// own `read` or `write` reached them as `Foundation.read`, which made the module import
/// all of Foundation (and link ICU into `vault`) for two system calls.
package enum SystemIO {
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    package static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(fd, buffer, count)
        #else
        Darwin.write(fd, buffer, count)
        #endif
    }
}

extension SystemIO {
    /// Makes the system call `call` again for as long as it fails with `EINTR`, as
    /// swift-nio's `syscall` does: a signal delivered while a call blocks (the agent's
    /// SIGCHLD, a terminal's SIGWINCH) interrupts it without anything having gone wrong.
    ///
    /// For calls that report failure by returning a negative value and setting `errno`
    /// (`read`, `write`, `send`, `recv`, `accept`, `flock`, `waitpid`, ...), not for those
    /// that return the error (`posix_spawn`).
    ///
    /// - Returns: the result of the first call not interrupted; when it is negative,
    ///   `errno` still holds that call's error.
    @inline(__always)
    package static func retryingInterrupted<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            guard result < 0, errno == EINTR else { return result }
        }
    }
}
