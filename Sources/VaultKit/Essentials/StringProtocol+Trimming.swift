/// Foundation's `trimmingCharacters(in: .whitespaces)` and `(in: .whitespacesAndNewlines)`,
/// which FoundationEssentials lacks: `vault` imports only FoundationEssentials so that it
/// does not link ICU (Benchmarks/README.md, "The agent").
///
/// Same result as Foundation's: Unicode scalars are trimmed from both ends, not
/// characters. Foundation's `.whitespacesAndNewlines` is the Unicode White_Space property
/// plus U+200B ZERO WIDTH SPACE (a space separator in old Unicode, still in its table);
/// `.whitespaces` is that without the line and paragraph separators (U+000A to U+000D,
/// U+0085, U+2028, U+2029).
extension StringProtocol {
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    package func trimmingWhitespaceAndNewlines() -> String {
        trimmingScalars(where: Self.isFoundationWhitespace)
    }

    /// `trimmingCharacters(in: .whitespaces)`.
    package func trimmingWhitespace() -> String {
        trimmingScalars { Self.isFoundationWhitespace($0) && !Self.isNewline($0) }
    }

    private static func isFoundationWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar == "\u{200B}"
    }

    private static func isNewline(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    private func trimmingScalars(where shouldTrim: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !shouldTrim($0) }),
              let last = scalars.lastIndex(where: { !shouldTrim($0) }) else { return "" }
        var trimmed = ""
        trimmed.unicodeScalars.append(contentsOf: scalars[first...last])
        return trimmed
    }
}
