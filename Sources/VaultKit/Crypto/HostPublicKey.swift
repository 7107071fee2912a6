#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
internal import CSodium

/// A host's X25519 public key: what another host adds to a vault so that this host can
/// unlock it with its own private key (see ``Vault/addHost(_:name:)-30m8k``).
///
/// Public keys are not secrets; they travel as 44 characters of base64.
public struct HostPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The length of a public key, in bytes.
    public static let byteCount = 32

    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// Wraps exactly ``byteCount`` bytes of a key that is not of low order.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for any other length, or
    ///   ``VaultError/Reason/hostPublicKeyLowOrder`` for a low-order point.
    public init(bytes: [UInt8]) throws(VaultError) {
        guard bytes.count == Self.byteCount else {
            throw .invalidArgument(.hostPublicKeyLength)
        }
        guard !Self.isLowOrder(bytes) else { throw .invalidArgument(.hostPublicKeyLowOrder) }
        self.bytes = bytes
    }

    /// `crypto_box_seal(masterKey, self)`: 80 bytes only this host's private key opens
    /// (``HostKeyPair/openSealed(_:)``).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` when libsodium refuses the key
    ///   (a low-order point, which ``init(bytes:)`` already refuses): nothing is sealed.
    func seal(_ masterKey: SecureBuffer) throws(VaultError) -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: Int(crypto_box_sealbytes()) + SecretBox.keyByteCount)
        let status = masterKey.withBytes { key in
            crypto_box_seal(&sealed, key.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(key.count), bytes)
        }
        guard status == 0 else { throw .invalidArgument(.hostPublicKeyLowOrder) }
        return sealed
    }

    /// Whether `bytes` is a point of order 1, 2, 4 or 8 (all zeros among them): a shared
    /// secret with it is all zeros whatever the private key, so a master key "sealed" to
    /// it is readable by anyone. libsodium's `crypto_scalarmult` reports exactly this
    /// (an all-zero result) by failing; any clamped scalar is a multiple of 8.
    private static func isLowOrder(_ bytes: [UInt8]) -> Bool {
        let scalar = [UInt8](repeating: 0x55, count: 32)
        var product = [UInt8](repeating: 0, count: 32)
        return crypto_scalarmult(&product, scalar, bytes) != 0
    }

    /// Reads standard base64 with padding, 44 characters (surrounding whitespace is ignored).
    public init(base64: String) throws(VaultError) {
        let text = base64.trimmingWhitespaceAndNewlines()
        guard let data = Data(base64Encoded: text), data.count == Self.byteCount else {
            throw .invalidArgument(.hostPublicKeyNotBase64)
        }
        try self.init(bytes: Array(data))
    }

    /// The key as standard base64, as ``init(base64:)`` reads it.
    public var base64: String { Data(bytes).base64EncodedString() }

    /// A short name for comparing keys by eye: `"vk1:"` and the first 16 bytes of the
    /// key's BLAKE2b-256 in lowercase hex.
    public var fingerprint: String {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&digest, 32, bytes, UInt64(bytes.count), nil, 0)
        return "vk1:" + digest.prefix(16).map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var description: String { base64 }
}
