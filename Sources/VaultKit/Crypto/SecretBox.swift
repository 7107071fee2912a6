internal import CSodium

/// `crypto_secretbox` (XSalsa20-Poly1305) with a fresh random nonce for every seal.
///
/// The sealed layout is libsodium's "easy" one: a 16-byte Poly1305 tag followed by
/// the ciphertext. Sealing happens in place, so the plaintext is written once, into
/// the buffer that becomes the ciphertext, and never needs a separate copy.
enum SecretBox {
    static let keyByteCount = 32    // crypto_secretbox_KEYBYTES
    static let nonceByteCount = 24  // crypto_secretbox_NONCEBYTES
    static let tagByteCount = 16    // crypto_secretbox_MACBYTES

    /// Seals `plaintextCount` bytes that `writePlaintext` writes.
    ///
    /// - Returns: the sealed bytes (tag + ciphertext); `nonce` receives the fresh nonce.
    static func seal(
        plaintextCount: Int,
        key: SecureBuffer,
        nonce: UnsafeMutableRawBufferPointer,
        writePlaintext: (UnsafeMutableRawBufferPointer) -> Void
    ) -> [UInt8] {
        precondition(key.count == keyByteCount && nonce.count == nonceByteCount)
        Sodium.randomBytes(nonce)
        let sealedCount = tagByteCount + plaintextCount
        return [UInt8](unsafeUninitializedCapacity: sealedCount) { buffer, initialized in
            let whole = UnsafeMutableRawBufferPointer(buffer)
            writePlaintext(UnsafeMutableRawBufferPointer(rebasing: whole[tagByteCount...]))
            let base = buffer.baseAddress!
            // libsodium allows the ciphertext to overlap the plaintext for the easy API.
            key.withBytes { key in
                _ = crypto_secretbox_easy(
                    base, base + tagByteCount, UInt64(plaintextCount),
                    nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
            initialized = sealedCount
        }
    }

    /// A nonce held inline (24 bytes on the stack or in its owner), so that sealing an
    /// item allocates nothing but the sealed output.
    struct Nonce: Sendable {
        private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

        init() {}

        func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
            var copy = words
            let result = Swift.withUnsafeBytes(of: &copy) { bytes in Swift.Result { () throws(Failure) in try body(bytes) } }
            return try result.get()
        }

        mutating func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
            Swift.withUnsafeMutableBytes(of: &words, body)
        }
    }

    /// Opens `sealed` into zeroed-on-release memory, or returns `nil` when the tag does
    /// not verify (wrong key, wrong nonce, or any modified byte).
    static func open(sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: SecureBuffer, lockInMemory: Bool = false) -> SecureBuffer? {
        guard sealed.count >= tagByteCount, nonce.count == nonceByteCount, key.count == keyByteCount else { return nil }
        var status: Int32 = -1
        let plaintext = SecureBuffer(count: sealed.count - tagByteCount, lockInMemory: lockInMemory) { plaintext in
            key.withBytes { key in
                status = crypto_secretbox_open_easy(
                    plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
                    nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
        return status == 0 ? plaintext : nil
    }
}
