import Foundation

/// A raw 32-byte key that unlocks a vault without a passphrase.
///
/// Use it when keys come from a KMS, a secret manager or the environment rather than
/// from a person. The bytes live in zeroed-on-release memory.
///
/// For example:
///
/// ```swift
/// let key = VaultKey.random()
/// let vault = try Vault.create(at: path, key: key)
/// ```
public struct VaultKey: Sendable, Equatable {
    /// The length of every vault key, in bytes.
    public static let byteCount = 32

    let secret: SecretBytes

    /// Wraps exactly ``byteCount`` bytes.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for any other length.
    public init(_ bytes: SecretBytes) throws(VaultError) {
        guard bytes.count == Self.byteCount else {
            throw VaultError.invalidArgument("a vault key must be exactly \(Self.byteCount) bytes, not \(bytes.count)")
        }
        secret = bytes
    }

    /// Copies exactly ``byteCount`` bytes out of `data`.
    public init(_ data: Data) throws(VaultError) {
        try self.init(SecretBytes(data))
    }

    /// A new key from libsodium's cryptographically secure generator.
    public static func random() -> VaultKey {
        let bytes = SecretBytes(count: byteCount) { Sodium.randomBytes($0) }
        return VaultKey(unchecked: bytes)
    }

    private init(unchecked bytes: SecretBytes) {
        secret = bytes
    }

    /// Calls `body` with the key bytes, for example to write them to a key file.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try secret.withUnsafeBytes(body)
    }
}

extension VaultKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "VaultKey(redacted)" }
    public var debugDescription: String { "VaultKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
