internal import CSodium

/// Ed25519 from a 32-byte seed (`crypto_sign_seed_keypair`), for the vault identity
/// (``IdentityRecord``): the expanded secret key lives only in locked memory for the
/// length of one call, and only Crypto calls libsodium.
enum IdentitySigning {
    /// The Ed25519 public key of `seed`.
    static func publicKey(seed: SecureBuffer) -> [UInt8] {
        withSecretKey(seed: seed) { publicKey, _ in publicKey }
    }

    /// The detached Ed25519 signature (64 bytes) of `message` by the key pair of `seed`.
    static func signature(of message: [UInt8], seed: SecureBuffer) -> [UInt8] {
        withSecretKey(seed: seed) { _, secretKey in
            var signature = [UInt8](repeating: 0, count: Int(crypto_sign_bytes()))
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
            return signature
        }
    }

    private static func withSecretKey<Result>(seed: SecureBuffer, _ body: ([UInt8], UnsafePointer<UInt8>) -> Result) -> Result {
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_publickeybytes()))
        let secretKey = SecureBuffer(count: Int(crypto_sign_secretkeybytes()), lockInMemory: true)
        return secretKey.withMutableBytes { secret in
            let secret = secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
            seed.withBytes { seed in
                _ = crypto_sign_seed_keypair(&publicKey, secret, seed.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            return body(publicKey, secret)
        }
    }
}
