#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// Why a message could not be decoded. Never carries the message's bytes.
package struct MalformedMessage: Error, Equatable {
    package let reason: String

    package init(reason: String) { self.reason = reason }
}

/// Reads what ``WireWriter`` wrote, refusing anything out of bounds, any string that is
/// not UTF-8, and any byte left over at the end.
package struct WireReader {
    private let storage: UnsafeRawBufferPointer
    private var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) { storage = bytes }

    package var isAtEnd: Bool { offset == storage.count }

    package func expectEnd() throws(MalformedMessage) {
        guard isAtEnd else { throw MalformedMessage(reason: "\(storage.count - offset) unexpected trailing bytes") }
    }

    private mutating func take(_ count: Int) throws(MalformedMessage) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= storage.count - offset else { throw MalformedMessage(reason: "truncated message") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: storage[offset..<offset + count])
    }

    package mutating func u8() throws(MalformedMessage) -> UInt8 {
        try take(1)[0]
    }

    package mutating func u32() throws(MalformedMessage) -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    package mutating func u64() throws(MalformedMessage) -> UInt64 {
        try take(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    package mutating func bytes() throws(MalformedMessage) -> UnsafeRawBufferPointer {
        try take(Int(try u32()))
    }

    package mutating func string() throws(MalformedMessage) -> String {
        let raw = try bytes()
        guard let text = String(validating: raw, as: UTF8.self) else { throw MalformedMessage(reason: "a string is not UTF-8") }
        return text
    }

    package mutating func flag() throws(MalformedMessage) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let other: throw MalformedMessage(reason: "presence flag \(other)")
        }
    }

    package mutating func optionalString() throws(MalformedMessage) -> String? {
        try flag() ? try string() : nil
    }

    package mutating func optionalData() throws(MalformedMessage) -> Data? {
        try flag() ? Data(try bytes()) : nil
    }

    package mutating func secret() throws(MalformedMessage) -> SecretBytes {
        let raw = try bytes()
        return SecretBytes(count: raw.count) { destination in
            if let base = destination.baseAddress, let source = raw.baseAddress { base.copyMemory(from: source, byteCount: raw.count) }
        }
    }

    package mutating func date() throws(MalformedMessage) -> Date {
        let seconds = Double(bitPattern: try u64())
        guard seconds.isFinite else { throw MalformedMessage(reason: "a date is not finite") }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// A count of following elements, bounded by the bytes left so a hostile count
    /// cannot make the reader reserve memory it will never fill.
    package mutating func count(minimumElementSize: Int) throws(MalformedMessage) -> Int {
        let count = Int(try u32())
        guard count <= (storage.count - offset) / max(minimumElementSize, 1) else { throw MalformedMessage(reason: "count \(count) exceeds the message") }
        return count
    }
}
