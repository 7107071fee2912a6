import VaultKit

/// The tool builds its output (JSON, `key=value` lines) and reads its input in
/// ``SecretBytes``, VaultKit's growable wiped memory, because a secret may sit among
/// the bytes; these helpers handle the parts that are not secret.
extension SecretBytes {
    /// Appends text that is not secret (JSON punctuation, names, dates).
    package mutating func append(_ text: String) {
        append(contentsOf: text.utf8)
    }

    /// The bytes as text (invalid UTF-8 repaired), for values that are not secret, such
    /// as a server URL or a user name read next to a secret.
    package var text: String {
        withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The last byte, if any: to drop a trailing newline or carriage return.
    package var lastByte: UInt8? {
        withUnsafeBytes { $0.last }
    }
}
