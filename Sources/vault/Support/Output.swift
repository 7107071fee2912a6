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

/// Builds JSON into ``SecretBytes`` so a secret inside it is zeroed afterwards.
///
/// Strings are written as UTF-8 with `"`, `\`, control characters (C0, DEL, C1) and the
/// other characters that act on terminals or reorder text (`Escaping.isUnsafe`) escaped;
/// keys keep the order they are written in.
struct JSONWriter {
    var buffer = SecretBytes()
    private var needsComma = [false]

    mutating func beginObject() { separate(); buffer.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { needsComma.removeLast(); buffer.append(UInt8(ascii: "}")) }
    mutating func beginArray() { separate(); buffer.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { needsComma.removeLast(); buffer.append(UInt8(ascii: "]")) }

    mutating func key(_ name: String) {
        separate()
        var name = name
        name.withUTF8 { appendString(UnsafeRawBufferPointer($0)) }
        buffer.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String?) {
        separate()
        guard var value else { buffer.append("null"); return }
        value.withUTF8 { appendString(UnsafeRawBufferPointer($0)) }
    }

    mutating func number(_ value: Int) { separate(); buffer.append(String(value)) }

    /// Writes bytes known to be valid UTF-8 as a JSON string.
    mutating func utf8String(_ bytes: UnsafeRawBufferPointer) {
        separate()
        appendString(bytes)
    }

    private mutating func separate() {
        if needsComma[needsComma.count - 1] { buffer.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendString(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(UInt8(ascii: "\""))
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""): buffer.append("\\\"")
            case UInt8(ascii: "\\"): buffer.append("\\\\")
            case UInt8(ascii: "\n"): buffer.append("\\n")
            case UInt8(ascii: "\r"): buffer.append("\\r")
            case UInt8(ascii: "\t"): buffer.append("\\t")
            case 0..<0x20, 0x7f: appendEscape(UInt32(byte))
            case 0xc0...:
                // A multi-byte character: a terminal control among them (see
                // `Escaping.isUnsafe`) is written as \uXXXX, so `vault list --json` on a
                // terminal cannot act on it; JSON readers decode it to the same character.
                let length = byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : 4
                if index + length <= bytes.count, let scalar = Self.scalar(bytes[index..<(index + length)]), Escaping.isUnsafe(scalar) {
                    appendEscape(scalar.value)
                    index += length
                    continue
                }
                buffer.append(byte)
            default: buffer.append(byte)
            }
            index += 1
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// `\uXXXX` (every escaped character is in the Basic Multilingual Plane).
    private mutating func appendEscape(_ value: UInt32) {
        let hex = String(value, radix: 16)
        buffer.append("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex)
    }

    /// The character encoded by `bytes` (one UTF-8 sequence), or `nil` if they are not one.
    private static func scalar(_ bytes: Slice<UnsafeRawBufferPointer>) -> Unicode.Scalar? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }
}

extension JSONWriter {
    /// The attributes of `item` (no secret) as members of the current object.
    mutating func attributes(of item: VaultItem) {
        key("service"); string(item.service)
        key("account"); string(item.account)
        key("label"); string(item.label)
        key("generic")
        if let generic = item.generic {
            if let text = String(validating: generic, as: UTF8.self) {
                string(text)
            } else {
                string(nil)
                key("genericBase64"); string(generic.base64EncodedString())
            }
        } else {
            string(nil)
        }
        key("created"); string(Timestamp.iso8601(item.created))
        key("modified"); string(Timestamp.iso8601(item.modified))
    }
}

enum Timestamp {
    /// For example `2026-11-22T17:50:27Z`, always in UTC.
    static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
