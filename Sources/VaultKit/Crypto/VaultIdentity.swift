internal import CSodium

/// The public half of a vault's identity key: what a host pins when it is enrolled, so
/// that its host key opens *this* vault and no other (docs/FORMAT.md section 12.1).
///
/// A host key alone cannot tell vaults apart: a wrap is sealed to the host's public key,
/// and that key is public, so anyone who can write the vault's storage can build a vault
/// of their own that the host key opens. Each vault therefore has an Ed25519 identity
/// whose secret half only its passphrase or key holders can use; it signs the host wraps,
/// and a host opening by host key accepts only wraps signed by the identity it pinned
/// (`Vault.open(at:hostKey:identity:busyTimeout:)`).
///
/// An identity travels as its ``fingerprint``: `"vkid1:"` and the 32-byte public key
/// in lowercase hex. It is not a secret; what matters is that the host gets it from the
/// vault's owner over a channel the attacker does not control.
public struct VaultIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The length of an identity's Ed25519 public key, in bytes.
    public static let byteCount = 32
    static let fingerprintPrefix = "vkid1:"

    /// The 32 bytes of the Ed25519 public key.
    public let publicKey: [UInt8]

    init(publicKey: [UInt8]) {
        precondition(publicKey.count == Self.byteCount)
        self.publicKey = publicKey
    }

    /// Reads a fingerprint as ``fingerprint`` writes it (surrounding whitespace ignored).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` with ``VaultError/Reason/invalidVaultIdentityFingerprint``
    ///   for anything else.
    public init(fingerprint: String) throws(VaultError) {
        let text = fingerprint.trimmingWhitespaceAndNewlines()
        guard text.hasPrefix(Self.fingerprintPrefix) else { throw .invalidArgument(.invalidVaultIdentityFingerprint) }
        let hex = Array(text.utf8.dropFirst(Self.fingerprintPrefix.utf8.count))
        guard hex.count == 2 * Self.byteCount else { throw .invalidArgument(.invalidVaultIdentityFingerprint) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        for index in stride(from: 0, to: hex.count, by: 2) {
            guard let high = Self.nibble(hex[index]), let low = Self.nibble(hex[index + 1]) else {
                throw .invalidArgument(.invalidVaultIdentityFingerprint)
            }
            bytes.append(high << 4 | low)
        }
        publicKey = bytes
    }

    /// Lowercase hex digits only: one spelling per key, so fingerprints compare as text.
    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// `"vkid1:"` and the public key in lowercase hex: 70 characters to hand to a host.
    public var fingerprint: String {
        Self.fingerprintPrefix + publicKey.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var description: String { fingerprint }

    /// Whether `signature` is this identity's Ed25519 signature of `message`.
    func isSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == Int(crypto_sign_bytes()) else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
