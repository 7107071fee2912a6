import Testing
import VaultKit
@testable import VaultSecretService

/// dh-ietf1024-sha256-aes128-cbc-pkcs7 against vectors computed independently with
/// SecretStorage's own formula (Python's pow, hmac and the cryptography package's AES).
@Suite struct SessionAlgorithmTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static let serverPrivate = SecretBytes((0..<128).map { UInt8(($0 * 7 + 3) % 256) })
    static let serverPublic = bytes("7b1d7d3188d79522e49e1ef8a54a32403fa559965ff46561a8d12fc1f79273e70b2c6ea601992ec15910b87dffa610904bdbc2bdd35b13c95a0d7cb40a0d62720f4a904259982b507d9981f4eedb7371db1336d26e29d58e2d2da00d7928a64cadc4eb683c04df21ac4f5f71174805326a640a789679de2fc1b3ed28d2c9ba71")
    static let clientPublic = bytes("af9e189839a7588ce318bc1e2c16a4dbeffdfaea2f5d1abf3b2f3ca8d75ea9ce2d884d63029bfb16cd25c146e472d10d002c20164f989293413ea1528e82487582b290bf2aa4d8fe5075bc6eb6243f98ea99aa8fc5c9c17543bc05a6667674d0c02b33da98c14b7c3f0d63b0bc12691b65067ec06208f1f09095813d910c13fa")
    static let aesKey = bytes("0eea0688043260834edb94c2b354b1c7")

    @Test func publicKeyIsTwoToThePrivateKeyModuloTheGroupPrime() throws {
        #expect(try DiffieHellman(privateKey: Self.serverPrivate).publicKey == Self.serverPublic)
    }

    @Test func aesKeyIsHKDFOfThePaddedSharedSecret() throws {
        let key = try Self.clientPublic.withUnsafeBytes { try DiffieHellman(privateKey: Self.serverPrivate).aesKey(clientPublicKey: $0) }
        #expect(key == SecretBytes(Self.aesKey))
    }

    @Test func aClientKeyOutsideTheGroupIsRefused() throws {
        let exchange = try DiffieHellman(privateKey: Self.serverPrivate)
        for refused in [[UInt8(1)], [0], Self.bytes(String(repeating: "ff", count: 128)), [UInt8](repeating: 1, count: 129)] {
            #expect(throws: BusError.self) { try refused.withUnsafeBytes { try exchange.aesKey(clientPublicKey: $0) } }
        }
    }

    @Test func decryptsWhatSecretStorageEncrypts() throws {
        let cipher = SessionCipher.aes(key: SecretBytes(Self.aesKey))
        let iv = [UInt8](0..<16)
        for (ciphertext, plaintext) in [("887d61b91a729de3149ee610a45532f6", "pa$$word"),
                                        ("71c7d4ef635a67f5023e5aa03b4e496ab87552b74500b14b9ce627d8db483150", "0123456789abcdef")] {
            let decoded = try iv.withUnsafeBytes { iv in try Self.bytes(ciphertext).withUnsafeBytes { try cipher.decode(parameters: iv, value: $0) } }
            #expect(decoded == SecretBytes(plaintext))
        }
    }

    @Test func encryptsWithAFreshIVThatDecryptsBack() throws {
        let cipher = SessionCipher.aes(key: SecretBytes(Self.aesKey))
        let first = try cipher.encode(SecretBytes("pa$$word")), second = try cipher.encode(SecretBytes("pa$$word"))
        #expect(first.parameters.count == 16 && first.parameters != second.parameters)
        #expect(first.value.count == 16)
        let decoded = try first.parameters.withUnsafeBytes { iv in try first.value.withUnsafeBytes { try cipher.decode(parameters: iv, value: $0) } }
        #expect(decoded == SecretBytes("pa$$word"))
    }

    @Test func wrongPaddingOrLengthIsAnErrorNotACrash() throws {
        let cipher = SessionCipher.aes(key: SecretBytes(Self.aesKey))
        let iv = [UInt8](0..<16)
        for value in [[UInt8](repeating: 0x41, count: 16), [1, 2, 3], []] {
            #expect(throws: BusError.self) { try iv.withUnsafeBytes { iv in try value.withUnsafeBytes { try cipher.decode(parameters: iv, value: $0) } } }
        }
        #expect(throws: BusError.self) { try [UInt8](0..<8).withUnsafeBytes { iv in try Self.bytes("887d61b91a729de3149ee610a45532f6").withUnsafeBytes { try cipher.decode(parameters: iv, value: $0) } } }
    }

    @Test func plainPassesSecretsThrough() throws {
        let encoded = try SessionCipher.plain.encode(SecretBytes("s3cret"))
        #expect(encoded.parameters.isEmpty && encoded.value == SecretBytes("s3cret"))
    }
}
