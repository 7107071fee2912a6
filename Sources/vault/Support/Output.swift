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
import VaultTransfer

/// Writes to file descriptors directly, so secret bytes go from protected memory to
/// the pipe without passing through stdio's buffers or a Swift `String`.
enum Output {
    /// Writes all of `bytes`, retrying after signals and partial writes.
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) throws(CLIError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let n = SystemIO.retryingInterrupted { SystemIO.write(fd, next, remaining) }
            if n < 0 {
                throw .cannotWrite(what: fd == STDOUT_FILENO ? "standard output" : "standard error", errno: errno)
            }
            next += n
            remaining -= n
        }
    }

    /// Writes text that is not secret; errors are ignored (used for standard error).
    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { try? write(UnsafeRawBufferPointer($0), to: fd) }
    }

    static func writeStandardOutput(_ buffer: SecretBytes) throws(CLIError) {
        try buffer.withUnsafeBytes { (bytes) throws(CLIError) in try write(bytes, to: STDOUT_FILENO) }
    }

    /// Writes a secret and one newline straight from its protected memory: no output
    /// buffer, so a 64 MiB secret is not copied once more on its way out.
    static func writeSecretLine(_ secret: SecretBytes) throws(CLIError) {
        var failure: CLIError?
        secret.withUnsafeBytes { bytes in
            do throws(CLIError) { try write(bytes, to: STDOUT_FILENO) } catch { failure = error }
        }
        if let failure { throw failure }
        var newline = UInt8(ascii: "\n")
        try withUnsafeBytes(of: &newline) { (bytes) throws(CLIError) in try write(bytes, to: STDOUT_FILENO) }
    }
}
