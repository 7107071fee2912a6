internal import CSodium

/// Argon2id (`crypto_pwhash`, algorithm `ARGON2ID13`): passphrase -> key-encryption key.
enum PassphraseKDF {
    static let saltByteCount = 16  // crypto_pwhash_SALTBYTES

    static func deriveKey(passphrase: SecretBytes, salt: [UInt8], parameters: KDFParameters) throws(VaultError) -> SecureBuffer {
        precondition(salt.count == saltByteCount)
        var status: Int32 = -1
        let key = SecureBuffer(count: SecretBox.keyByteCount, lockInMemory: true) { key in
            // SecureBuffer's pointer is valid even for an empty passphrase.
            status = passphrase.storage.withBytes { whole in
                passphrase.withUnsafeBytes { pass in
                    salt.withUnsafeBufferPointer { salt in
                        crypto_pwhash(
                            key.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(key.count),
                            (pass.baseAddress ?? whole.baseAddress!).assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                            salt.baseAddress!,
                            parameters.opsLimit, parameters.memoryLimit,
                            crypto_pwhash_ALG_ARGON2ID13
                        )
                    }
                }
            }
        }
        // crypto_pwhash fails only when it cannot allocate `memoryLimit` bytes.
        guard status == 0 else { throw .keyDerivationFailed }
        return key
    }
}
