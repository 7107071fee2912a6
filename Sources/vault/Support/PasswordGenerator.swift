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

/// Random passwords and passphrases for `vault generate`, straight into ``SecretBytes``.
///
/// Every choice is VaultKit's `SecureRandom.uniform(below:)` (libsodium's
/// `randombytes_uniform`), which is unbiased (it rejects the values that would favour
/// some results), from the system's secure random source.
enum PasswordGenerator {
    enum CharacterClass: String, CaseIterable, Sendable {
        case lower, upper, digits, symbols

        var characters: [UInt8] {
            switch self {
            case .lower: Array("abcdefghijklmnopqrstuvwxyz".utf8)
            case .upper: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
            case .digits: Array("0123456789".utf8)
            // No quotes, backslash, backtick, space or '|': safe to paste into a shell or a config file.
            case .symbols: Array("!#$%&()*+,-./:;<=>?@[]^_{}~".utf8)
            }
        }
    }

    /// Syllables of pronounceable passphrase words: consonant then vowel.
    static let consonants = Array("bdfghjklmnprstvz".utf8)
    static let vowels = Array("aeiou".utf8)
    static let syllablesPerWord = 3

    /// A password of `length` characters from `classes`, holding at least one of each.
    ///
    /// Drawn uniformly over all such passwords: a draw that misses a class is thrown away
    /// whole and drawn again (rejection), which keeps every valid password equally likely.
    static func password(length: Int, classes: [CharacterClass]) throws(VaultError) -> SecretBytes {
        precondition(length >= classes.count && !classes.isEmpty)
        try SecureRandom.ensureAvailable()
        let alphabet = classes.flatMap(\.characters)
        let classOf = Dictionary(uniqueKeysWithValues: classes.enumerated().flatMap { index, characterClass in
            characterClass.characters.map { ($0, index) }
        })
        while true {
            var complete = false
            let candidate = SecretBytes(count: length) { buffer in
                var seen = [Bool](repeating: false, count: classes.count)
                for index in 0..<length {
                    let character = alphabet[Int(SecureRandom.uniform(below: UInt32(alphabet.count)))]
                    buffer[index] = character
                    seen[classOf[character]!] = true
                }
                complete = seen.allSatisfy { $0 }
            }
            if complete { return candidate }
        }
    }

    /// `words` pronounceable words of ``syllablesPerWord`` syllables, joined by `separator`.
    static func passphrase(words: Int, separator: String) throws(VaultError) -> SecretBytes {
        precondition(words > 0)
        try SecureRandom.ensureAvailable()
        let wordLength = syllablesPerWord * 2
        let separatorBytes = Array(separator.utf8)
        let count = words * wordLength + (words - 1) * separatorBytes.count
        return SecretBytes(count: count) { buffer in
            var index = 0
            for word in 0..<words {
                if word > 0 {
                    for byte in separatorBytes { buffer[index] = byte; index += 1 }
                }
                for _ in 0..<syllablesPerWord {
                    buffer[index] = consonants[Int(SecureRandom.uniform(below: UInt32(consonants.count)))]
                    buffer[index + 1] = vowels[Int(SecureRandom.uniform(below: UInt32(vowels.count)))]
                    index += 2
                }
            }
        }
    }

    /// The entropy of ``password(length:classes:)``, in bits: log2 of the number of
    /// passwords it can give (all strings over the alphabet, minus those missing a class,
    /// by inclusion-exclusion).
    static func passwordEntropy(length: Int, classes: [CharacterClass]) -> Double {
        let total = Double(classes.reduce(0) { $0 + $1.characters.count })
        // Fraction of all strings that contain every class.
        var fraction = 0.0
        for subset in 0..<(1 << classes.count) {
            let missing = classes.indices.filter { subset & (1 << $0) != 0 }
            let remaining = total - Double(missing.reduce(0) { $0 + classes[$1].characters.count })
            let term = pow(remaining / total, Double(length))
            fraction += missing.count.isMultiple(of: 2) ? term : -term
        }
        return Double(length) * log2(total) + log2(fraction)
    }

    /// The entropy of ``passphrase(words:separator:)``, in bits.
    static func passphraseEntropy(words: Int) -> Double {
        Double(words * syllablesPerWord) * log2(Double(consonants.count * vowels.count))
    }
}
