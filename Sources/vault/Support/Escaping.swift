/// How names are written where a tab or newline inside them would break the output
/// format (`vault list`) or the one-line error rule.
///
/// C-style escapes: a backslash becomes `\\`, a tab `\t`, a newline `\n`, a carriage
/// return `\r`, and any other control character (U+0000 to U+001F, U+007F) `\xHH` with
/// two lowercase hex digits. Everything else, including non-ASCII UTF-8, is written
/// as is. The escaping is reversible: a reader splits each line at its one raw tab,
/// then undoes the escapes.
enum Escaping {
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                let hex = String(scalar.value, radix: 16)
                result += "\\x" + (hex.count < 2 ? "0" : "") + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The escaped name in single quotes, for messages.
    static func quoted(_ text: String) -> String {
        "'" + escaped(text) + "'"
    }
}

enum UTF8Validation {
    /// Whether `bytes` are valid UTF-8, checked in place: unlike `String(validating:)`,
    /// this makes no unprotected copy of a secret.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
