import VaultKit

/// The check every value written to a credential helper protocol (git's, Docker's)
/// passes first.
///
/// Why: git's protocol is one `key=value` per line, so a newline inside a stored value
/// would start an attribute of the item's choosing (`username=mallory`), and a NUL ends
/// the value early in C readers. An item can hold either (`vault set` takes any bytes),
/// so the helpers refuse such an item instead of writing it.
enum ProtocolValue {
    static func isUnsafe(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0 || $0 == UInt8(ascii: "\n") }
    }

    static func isUnsafe(_ secret: SecretBytes) -> Bool {
        secret.withUnsafeBytes { bytes in bytes.contains { $0 == 0 || $0 == UInt8(ascii: "\n") } }
    }
}
