internal import CSodium

/// SHA-256 (`crypto_hash_sha256`), for the products that must speak a protocol built on it
/// (VaultAuth's PKCE `S256` challenge) without importing libsodium: only Crypto calls it.
package enum SHA256 {
    /// The digest length, in bytes.
    package static let byteCount = 32

    /// `SHA-256(message)`.
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_hash_sha256(&digest, message, UInt64(message.count))
        return digest
    }
}
