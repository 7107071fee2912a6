internal import CSodium

/// BLAKE2b-256 (`crypto_generichash`, 32-byte output), keyed or not, for the layers
/// above Crypto that authenticate or digest their own bytes (host wraps, the vault
/// identity, rollback records): they name the hash, only Crypto calls libsodium.
enum Blake2b {
    /// The output length, in bytes.
    static let byteCount = 32

    /// `BLAKE2b-256(message)`, unkeyed.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        _ = crypto_generichash(&digest, byteCount, message, UInt64(message.count), nil, 0)
        return digest
    }

    /// `BLAKE2b-256(key, message)`: a MAC when the result is public.
    static func hash(_ message: [UInt8], key: SecureBuffer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        key.withBytes { key in
            _ = crypto_generichash(&digest, byteCount, message, UInt64(message.count), key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count)
        }
        return digest
    }

    /// `BLAKE2b-256(key, message)` into locked, wiped-on-release memory: a derived key,
    /// which must never sit in an ordinary array.
    static func derivedKey(_ message: [UInt8], key: SecureBuffer) -> SecureBuffer {
        SecureBuffer(count: byteCount, lockInMemory: true) { output in
            key.withBytes { key in
                _ = crypto_generichash(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), byteCount,
                    message, UInt64(message.count),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self), key.count
                )
            }
        }
    }
}
