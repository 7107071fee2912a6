import VaultKit

/// Builds JSON into ``SecretBytes`` so a secret inside it is zeroed afterwards.
///
/// Strings are written as UTF-8 with `"`, `\`, control characters (C0, DEL, C1) and the
/// other characters that act on terminals or reorder text (`Escaping.isUnsafe`) escaped;
/// keys keep the order they are written in.
package struct JSONWriter {
    package var buffer = SecretBytes()
    private var needsComma = [false]

    package init() {}

    package mutating func beginObject() { separate(); buffer.append(UInt8(ascii: "{")); needsComma.append(false) }
    package mutating func endObject() { needsComma.removeLast(); buffer.append(UInt8(ascii: "}")) }
    package mutating func beginArray() { separate(); buffer.append(UInt8(ascii: "[")); needsComma.append(false) }
    package mutating func endArray() { needsComma.removeLast(); buffer.append(UInt8(ascii: "]")) }

    package mutating func key(_ name: String) {
        separate()
        var name = name
        name.withUTF8 { appendString(UnsafeRawBufferPointer($0)) }
        buffer.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    package mutating func string(_ value: String?) {
        separate()
        guard var value else { buffer.append("null"); return }
        value.withUTF8 { appendString(UnsafeRawBufferPointer($0)) }
    }

    package mutating func number(_ value: Int) { separate(); buffer.append(String(value)) }

    /// Writes bytes known to be valid UTF-8 as a JSON string.
    package mutating func utf8String(_ bytes: UnsafeRawBufferPointer) {
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
