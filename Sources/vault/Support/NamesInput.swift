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

/// Item names read from a file or standard input (`--names-from`): the service on the
/// first line, the account on the second, each without its line ending.
///
/// Names are refused, never repaired, when they are not valid UTF-8: two names that
/// differ only in invalid bytes would both become U+FFFD and silently name one item.
enum NamesInput {
    /// At most two names of VaultKit's maximum length, their line endings, and a final one.
    static let limit = 2 * (64 * 1024 + 2) + 1

    static func read(from path: String, accountRequired: Bool) throws(CLIError) -> (service: String, account: String?) {
        let what = path == "-" ? "the names on standard input" : "the names file \(path)"
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(what: what, errno: errno) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var contents = SecretBytes()
        do throws(CLIError) {
            guard try contents.readAll(from: fd, limit: limit) else { throw CLIError.cannotRead(what: what, errno: EFBIG) }
        } catch {
            if case .cannotRead(_, let code) = error { throw .cannotRead(what: what, errno: code) }
            throw error
        }
        var lines = contents.withUnsafeBytes { Array($0) }.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }  // the final newline
        guard let first = lines.first, !first.isEmpty else { throw .usage("\(what): the first line must hold the service") }
        guard lines.count <= 2 else { throw .usage("\(what): expected the service and the account, one per line") }
        if accountRequired && lines.count < 2 { throw .usage("\(what): the second line must hold the account") }
        guard let service = String(validating: first, as: UTF8.self) else { throw .notUTF8Name(what: "the service in \(what)") }
        guard lines.count == 2 else { return (service, nil) }
        guard let account = String(validating: lines[1], as: UTF8.self) else { throw .notUTF8Name(what: "the account in \(what)") }
        return (service, account)
    }
}
