/// Why ``JSONReader`` refused a document, and on which line: never the text there,
/// which may be a password.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    package enum Reason: Equatable, Sendable {
        case endsEarly
        case trailingData
        case expectedMemberName
        case memberNameNotUTF8
        case unterminatedString
        case controlCharacter
        /// A `\uD800`-`\uDBFF` escape without a `\uDC00`-`\uDFFF` one right after it, or
        /// the second without the first: no character, so no UTF-8 to store. Refused
        /// rather than replaced by U+FFFD, so that two different secrets never import as one.
        case unpairedSurrogate
        case invalidUnicodeEscape
        case invalidEscape
        case unexpectedCharacter
        /// Nested more than 64 levels deep.
        case tooDeep
        case expected(Character)
    }

    package let reason: Reason
    /// The line the reader stopped on, from 1.
    package let line: Int

    package init(reason: Reason, line: Int) {
        self.reason = reason
        self.line = line
    }

    package var description: String {
        "invalid JSON at line \(line): \(reasonText)"
    }

    private var reasonText: String {
        switch reason {
        case .endsEarly: "the JSON ends early"
        case .trailingData: "unexpected data after the JSON document"
        case .expectedMemberName: "expected a member name"
        case .memberNameNotUTF8: "a member name is not valid UTF-8"
        case .unterminatedString: "a string is not terminated"
        case .controlCharacter: "a control character inside a string"
        case .unpairedSurrogate: "an unpaired surrogate escape"
        case .invalidUnicodeEscape: "an invalid \\u escape"
        case .invalidEscape: "an invalid escape in a string"
        case .unexpectedCharacter: "unexpected character"
        case .tooDeep: "nested more than 64 levels deep"
        case .expected(let character): "expected '\(character)'"
        }
    }
}
