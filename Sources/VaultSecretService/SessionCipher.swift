import CSecretService
import VaultKit

/// How secrets cross the bus in one session: as they are (`plain`), or encrypted with
/// the AES key the client and this service agreed on (`dh-ietf1024-sha256-aes128-cbc-pkcs7`).
package enum SessionCipher {
    case plain
    case aes(key: SecretBytes)

    package static let plainName = "plain"
    package static let dhName = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// A secret as the client receives it: (parameters, value). For AES the parameters
    /// are a fresh random IV.
    package func encode(_ secret: SecretBytes) throws(BusError) -> (parameters: [UInt8], value: SecretBytes) {
        switch self {
        case .plain:
            return ([], secret)
        case .aes(let key):
            var iv = [UInt8](repeating: 0, count: 16)
            iv.withUnsafeMutableBytes { SecureRandom.fill($0) }
            var written = -1
            let output = SecretBytes(count: secret.count + 16) { output in
                written = key.withUnsafeBytes { key in
                    secret.withUnsafeBytes { input in
                        vkss_aes_encrypt(key.bindMemory(to: UInt8.self).baseAddress, iv, input.bindMemory(to: UInt8.self).baseAddress, input.count, output.bindMemory(to: UInt8.self).baseAddress)
                    }
                }
            }
            guard written >= 0 else { throw .failed("could not encrypt the secret") }
            return (iv, output.extracting(0..<written))
        }
    }

    /// A secret the client sent: the inverse of ``encode(_:)``.
    package func decode(parameters: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(BusError) -> SecretBytes {
        switch self {
        case .plain:
            guard parameters.isEmpty else { throw .invalidArgs("a plain session's secret has no parameters") }
            return SecretBytes(value)
        case .aes(let key):
            guard parameters.count == 16 else { throw .invalidArgs("an encrypted secret's parameters are its 16-byte IV") }
            guard !value.isEmpty, value.count % 16 == 0 else { throw .invalidArgs("an encrypted secret is a whole number of AES blocks") }
            var written = -1
            let output = SecretBytes(count: value.count + 16) { output in
                written = key.withUnsafeBytes { key in
                    vkss_aes_decrypt(key.bindMemory(to: UInt8.self).baseAddress, parameters.bindMemory(to: UInt8.self).baseAddress,
                                     value.bindMemory(to: UInt8.self).baseAddress, value.count, output.bindMemory(to: UInt8.self).baseAddress)
                }
            }
            guard written >= 0 else { throw .invalidArgs("the encrypted secret does not decrypt with this session's key") }
            return output.extracting(0..<written)
        }
    }
}
