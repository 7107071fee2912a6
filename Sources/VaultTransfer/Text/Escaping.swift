/// How names are written where a tab or newline inside them would break the output
/// format (`vault list`) or the one-line error rule, and where a terminal control
/// inside them could act on the user's terminal.
///
/// C-style escapes: a backslash becomes `\\`, a tab `\t`, a newline `\n`, a carriage
/// return `\r`, any other C0 control character (U+0000 to U+001F) or DEL `\xHH` with two
/// lowercase hex digits, and the characters below `\u{HHHH}` (lowercase hex, at least
/// four digits). Everything else, including other non-ASCII UTF-8, is written as is.
/// The escaping is reversible: a reader splits each line at its one raw tab, then
/// undoes the escapes.
///
/// Escaped as `\u{...}`: C1 controls (U+0080 to U+009F: U+009B is a one-character CSI,
/// U+009D an OSC, which some terminals obey), the bidirectional overrides, embeddings
/// and isolates (U+202A to U+202E, U+2066 to U+2069) and marks (U+200E, U+200F, U+061C),
/// which reorder what is displayed ("Trojan Source"), and the line and paragraph
/// separators U+2028 and U+2029.
package enum Escaping {
    package static func escaped(_ text: String) -> String {
        // Most names need nothing: no copy then.
        guard text.unicodeScalars.contains(where: { $0 == "\\" || isUnsafe($0) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if scalar == "\\" { result += "\\\\" } else { append(scalar, to: &result) }
        }
        return result
    }

    /// The escaped name in single quotes, for messages.
    package static func quoted(_ text: String) -> String {
        "'" + escaped(text) + "'"
    }

    /// `text` with only the characters that could act on a terminal escaped (as in
    /// ``escaped(_:)``), and backslashes left alone: for whole messages and prompts, in
    /// which names are already escaped and paths appear as they are.
    package static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars { append(scalar, to: &result) }
        return result
    }

    /// Whether `scalar` is escaped (besides the backslash).
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7f, 0x80...0x9f: true
        case 0x061c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to result: inout String) {
        switch scalar {
        case "\t": result += "\\t"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case _ where scalar.value < 0x20 || scalar.value == 0x7f:
            let hex = String(scalar.value, radix: 16)
            result += "\\x" + (hex.count < 2 ? "0" : "") + hex
        case _ where isUnsafe(scalar):
            let hex = String(scalar.value, radix: 16)
            result += "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
        default: result.unicodeScalars.append(scalar)
        }
    }
}
