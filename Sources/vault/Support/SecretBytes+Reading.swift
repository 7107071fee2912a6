#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

/// Reading input (a secret on standard input, a passphrase file, an import file)
/// straight into wiped memory, with no intermediate `Data` or `Array` left behind.
extension SecretBytes {
    /// Reads from `fd` until end of file, at most `limit` bytes.
    ///
    /// - Returns: `false` if more than `limit` bytes were available.
    mutating func readAll(from fd: Int32, limit: Int) throws(CLIError) -> Bool {
        try fill(from: fd, limit: limit, chunk: 64 * 1024, untilNewline: false)
    }

    /// Reads until a newline has arrived or the input ended, returning `true`; or `false`
    /// once more than `limit` bytes came without a newline. Bytes after the newline in
    /// the last read may be kept too.
    mutating func readFirstLine(from fd: Int32, limit: Int) throws(CLIError) -> Bool {
        try fill(from: fd, limit: limit, chunk: 4096, untilNewline: true)
    }

    /// Appends what one `read(2)` of at most `maxCount` bytes from `fd` returns, trying
    /// again after a signal.
    ///
    /// - Returns: the number of bytes read (0 at end of input), or `errno` when it failed.
    mutating func appendRead(from fd: Int32, maxCount: Int) -> (count: Int, errno: Int32) {
        var failure: Int32 = 0
        let n = append(maxCount: maxCount) { room in
            let n = SystemIO.retryingInterrupted { SystemIO.read(fd, room.baseAddress, room.count) }
            if n < 0 { failure = errno }
            return max(n, 0)
        }
        return (n, failure)
    }

    private mutating func fill(from fd: Int32, limit: Int, chunk: Int, untilNewline: Bool) throws(CLIError) -> Bool {
        while true {
            let start = count
            let (n, failure) = appendRead(from: fd, maxCount: min(chunk, limit + 1 - count))
            if failure != 0 { throw .cannotRead(what: "standard input", errno: failure) }
            if n == 0 { return true }
            if untilNewline, withUnsafeBytes({ $0[start...].contains(UInt8(ascii: "\n")) }) { return true }
            if count > limit { return false }
        }
    }
}
