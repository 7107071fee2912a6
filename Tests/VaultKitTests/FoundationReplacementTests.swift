import Foundation
import Testing
import TestTraits
@testable import VaultKit

/// The small stand-ins for Foundation APIs that FoundationEssentials lacks (VaultKit and
/// `vault` import only FoundationEssentials): each gives Foundation's own result.
@Suite(.offCooperativePool) struct FoundationReplacementTests {
    /// Every scalar of the Basic Multilingual Plane and one beyond it, alone and around
    /// text, trimmed both ways.
    @Test func trimmingMatchesFoundationForEveryScalar() {
        let scalars = (0...0xFFFF).compactMap(Unicode.Scalar.init) + ["\u{1D11E}"]
        var differing: [String] = []
        for scalar in scalars {
            let around = "\(scalar)\(scalar) a\u{0301} b\t\(scalar)"
            for text in [String(scalar), around, "x" + around, around + "\u{2028}"]
            where text.trimmingWhitespace() != text.trimmingCharacters(in: .whitespaces)
                || text.trimmingWhitespaceAndNewlines() != text.trimmingCharacters(in: .whitespacesAndNewlines) {
                differing.append("U+" + String(scalar.value, radix: 16))
            }
        }
        #expect(differing.isEmpty, "\(differing.prefix(20))")
    }

    /// Foundation trims scalars, not characters: a combining mark after trimmed
    /// whitespace stays, and so does one before it.
    @Test func trimmingWorksOnScalarsAndSubstrings() {
        let text = " \u{0301}x\u{0301} \n"
        #expect(text.trimmingWhitespaceAndNewlines() == "\u{0301}x\u{0301}")
        #expect(text.trimmingWhitespace() == "\u{0301}x\u{0301} \n")
        let substring = "[ \tinner text\u{3000}]".dropFirst().dropLast()
        #expect(substring.trimmingWhitespace() == substring.trimmingCharacters(in: .whitespaces))
        #expect(substring.trimmingWhitespace() == "inner text")
        #expect(" \n\t ".trimmingWhitespaceAndNewlines().isEmpty)
        #expect("\u{200B}key\u{200B}".trimmingWhitespace() == "key")
    }

    @Test func replacingBytesMatchesFoundationsLiteralReplacement() {
        let cases: [(String, String, String)] = [
            ("password authentication failed for user \"vault\": hunter2", "hunter2", "***"),
            ("aaaa", "aa", "b"), ("abc", "", "x"), ("", "a", "b"), ("ümlaut ü", "ü", "u"),
        ]
        for (text, target, replacement) in cases where !target.isEmpty {
            #expect(text.replacingBytes(of: target, with: replacement) == text.replacingOccurrences(of: target, with: replacement, options: .literal))
        }
        #expect("abc".replacingBytes(of: "", with: "x") == "abc")
        #expect("aaaa".replacingBytes(of: "aa", with: "b") == "bb")
    }

    /// A secret followed by a combining mark is still found: it is scrubbed by its bytes.
    @Test func replacingBytesFindsASecretBeforeACombiningMark() {
        let message = "could not connect: s3cret\u{0301} refused"
        #expect(message.replacingBytes(of: "s3cret", with: "***") == "could not connect: ***\u{0301} refused")
        #expect(!message.replacingBytes(of: "s3cret", with: "***").utf8.elementsEqual(message.utf8))
    }

    /// A key whose BLAKE2b-256 starts 05 10 16 07 (computed independently with Python's
    /// hashlib): leading zeros of each byte are kept.
    @Test func fingerprintIsLowercaseHexWithEveryByteTwoDigits() throws {
        let key = try HostPublicKey(base64: "AQgPFh0kKzI5QEdOVVxjanF4f4aNlJuiqbC3vsXM09o=")
        #expect(key.fingerprint == "vk1:05101607a9417c6be693c23027447c2f")
    }
}
