import CSecretService
import VaultKit

/// The key agreement of `dh-ietf1024-sha256-aes128-cbc-pkcs7`: RFC 2409's 1024-bit group
/// 2, and the AES-128 key derived from the shared secret as gnome-keyring, libsecret and
/// SecretStorage derive it (Sources/CSecretService/session_crypto.c).
package struct DiffieHellman {
    private let privateKey: SecretBytes
    /// This side's public key, 128 bytes big-endian, for the OpenSession reply.
    package let publicKey: [UInt8]

    /// A fresh random private key.
    package init() throws(BusError) {
        try self.init(privateKey: SecretBytes(count: 128) { SecureRandom.fill($0) })
    }

    /// A given private key (the tests' known vectors).
    package init(privateKey: SecretBytes) throws(BusError) {
        guard vkss_crypto_load() == 0 else { throw .notSupported("libcrypto (OpenSSL) could not be loaded; only the plain algorithm is available") }
        guard privateKey.count == 128 else { throw .failed("a private key is 128 bytes") }
        var publicKey = [UInt8](repeating: 0, count: 128)
        let status = privateKey.withUnsafeBytes { vkss_dh_public_key($0.bindMemory(to: UInt8.self).baseAddress, &publicKey) }
        guard status == 0 else { throw .failed("could not make a key pair") }
        self.privateKey = privateKey
        self.publicKey = publicKey
    }

    /// The session's AES key for the client's public key (big-endian, at most 128 bytes).
    package func aesKey(clientPublicKey: UnsafeRawBufferPointer) throws(BusError) -> SecretBytes {
        var status: Int32 = -1
        let key = SecretBytes(count: 16) { key in
            status = privateKey.withUnsafeBytes { privateKey in
                vkss_dh_aes_key(privateKey.bindMemory(to: UInt8.self).baseAddress, clientPublicKey.bindMemory(to: UInt8.self).baseAddress,
                                clientPublicKey.count, key.bindMemory(to: UInt8.self).baseAddress)
            }
        }
        guard status == 0 else { throw .invalidArgs("the client's public key is not a valid key of the 1024-bit group") }
        return key
    }
}
