import VaultKit

/// Reads the string members of one JSON object, such as Docker's
/// `{"ServerURL":"...","Username":"...","Secret":"..."}`, with every value decoded
/// (escapes included) into ``SecretBytes``: a secret in the object never becomes a
/// Swift `String`. Members of other types are skipped; nested values are not supported.
struct FlatJSONObject {
    /// Each member's name and its decoded string value (`nil` for `null`, numbers, booleans).
    private(set) var members: [(name: String, value: SecretBytes?)] = []

    struct SyntaxError: Error {}

    init(parsing bytes: UnsafeRawBufferPointer) throws(SyntaxError) {
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        }
        func expect(_ byte: UInt8) throws(SyntaxError) {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { throw SyntaxError() }
            index += 1
        }
        try expect(UInt8(ascii: "{"))
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                let name = try Self.string(bytes, &index)
                try expect(UInt8(ascii: ":"))
                skipSpace()
                guard index < bytes.count else { throw SyntaxError() }
                if bytes[index] == UInt8(ascii: "\"") {
                    members.append((name.text, try Self.string(bytes, &index)))
                } else {
                    // A literal or number: skipped up to the next separator.
                    let start = index
                    while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
                    guard index > start, !["{", "["].contains(Character(UnicodeScalar(bytes[start]))) else { throw SyntaxError() }
                    members.append((name.text, nil))
                }
                skipSpace()
                guard index < bytes.count else { throw SyntaxError() }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"))
                break
            }
        }
        skipSpace()
        guard index == bytes.count else { throw SyntaxError() }
    }

    /// The value of the last member called `name`, compared without regard to case as
    /// Go's `encoding/json` (and so Docker) does.
    func value(_ name: String) -> SecretBytes? {
        members.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// A JSON string starting at `index` (at its opening quote), decoded.
    private static func string(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) throws(SyntaxError) -> SecretBytes {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw SyntaxError() }
        index += 1
        var value = SecretBytes()
        while true {
            guard index < bytes.count else { throw SyntaxError() }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return value
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw SyntaxError() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): value.append(escape)
                case UInt8(ascii: "b"): value.append(0x08)
                case UInt8(ascii: "f"): value.append(0x0c)
                case UInt8(ascii: "n"): value.append(0x0a)
                case UInt8(ascii: "r"): value.append(0x0d)
                case UInt8(ascii: "t"): value.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(bytes, &index)
                    if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count,
                       bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                        var lookahead = index + 2
                        let low = try hex4(bytes, &lookahead)
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            index = lookahead
                        }
                    }
                    appendUTF8(scalar, to: &value)
                default: throw SyntaxError()
                }
            case 0..<0x20:
                throw SyntaxError()
            default:
                value.append(byte)
            }
        }
    }

    /// Encodes one scalar by hand, so not even one character of a secret becomes a `String`.
    /// A lone surrogate becomes U+FFFD, as Go's decoder does.
    private static func appendUTF8(_ scalar: UInt32, to value: inout SecretBytes) {
        let scalar = (0xD800..<0xE000).contains(scalar) ? 0xFFFD : scalar
        switch scalar {
        case ..<0x80:
            value.append(UInt8(scalar))
        case ..<0x800:
            value.append(UInt8(0xC0 | scalar >> 6))
            value.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            value.append(UInt8(0xE0 | scalar >> 12))
            value.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            value.append(UInt8(0x80 | scalar & 0x3F))
        default:
            value.append(UInt8(0xF0 | scalar >> 18))
            value.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            value.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            value.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    private static func hex4(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw SyntaxError() }
        var result: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(UnicodeScalar(bytes[index])).hexDigitValue else { throw SyntaxError() }
            result = result << 4 | UInt32(digit)
            index += 1
        }
        return result
    }
}
