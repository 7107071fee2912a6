import VaultKit

/// A strict RFC 8259 reader over bytes in memory, for import files and the Docker
/// credential protocol alike, so that a password inside either is decoded straight into
/// protected memory, never into a `String` or `Data` that outlives it. The one JSON
/// reader: a second one would accept what this one refuses (a lone surrogate escape).
package struct JSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    private var scratch = SecretBytes()

    /// Parses one JSON document (surrounding whitespace allowed).
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> JSONValue {
        var reader = JSONReader(bytes: bytes)
        if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        let value = try reader.value()
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error(.trailingData) }
        return value
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw error(.endsEarly) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if peek(UInt8(ascii: "}")) { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else { throw error(.expectedMemberName) }
            guard let key = try string().string() else { throw error(.memberNameNotUTF8) }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            members.append((key, try value()))
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            try expect(UInt8(ascii: "}"))
            return .object(members)
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) { index += 1; return .array(values) }
        while true {
            values.append(try value())
            skipWhitespace()
            if peek(UInt8(ascii: ",")) { index += 1; continue }
            try expect(UInt8(ascii: "]"))
            return .array(values)
        }
    }

    /// Decodes a string, escapes included, into protected memory.
    private mutating func string() throws(JSONSyntaxError) -> SecretBytes {
        index += 1
        scratch.removeAll()
        while true {
            guard index < bytes.count else { throw error(.unterminatedString) }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return scratch
            case UInt8(ascii: "\\"):
                try escape()
            case 0..<0x20:
                throw error(.controlCharacter)
            default:
                scratch.append(byte)
            }
        }
    }

    private mutating func escape() throws(JSONSyntaxError) {
        guard index < bytes.count else { throw error(.unterminatedString) }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error(.unpairedSurrogate)
                }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error(.unpairedSurrogate) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error(.unpairedSurrogate)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error(.invalidUnicodeEscape) }
            for unit in UTF8.encode(unicode)! { scratch.append(unit) }
        default:
            throw error(.invalidEscape)
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error(.invalidUnicodeEscape) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.invalidUnicodeEscape)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard !text.isEmpty, let value = Double(text), !text.hasPrefix("+"), !text.hasPrefix(".") else {
            index = start
            throw error(.unexpectedCharacter)
        }
        return value
    }

    private mutating func literal(_ word: String) throws(JSONSyntaxError) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error(.unexpectedCharacter) }
            index += 1
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= 64 else { throw error(.tooDeep) }
    }

    private mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard peek(byte) else {
            throw error(index < bytes.count ? .expected(Character(Unicode.Scalar(byte))) : .endsEarly)
        }
        index += 1
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    /// Names the line, never the text there (it may be a password).
    private func error(_ reason: JSONSyntaxError.Reason) -> JSONSyntaxError {
        let line = bytes[..<min(index, bytes.count)].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        return JSONSyntaxError(reason: reason, line: line)
    }
}
