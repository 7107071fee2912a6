#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CSodium

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
    /// - Throws: ``VaultError/invalidKeyLength(byteCount:)`` for any other length.
    public init(_ bytes: SecretBytes) throws(VaultError) {
        guard bytes.count == Self.byteCount else {
            throw VaultError.invalidKeyLength(byteCount: bytes.count)
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

// MARK: Text encodings

/// Hex and base64 forms of a key, to move it between processes (an environment variable, a
/// secret manager's text field). The conversions run in libsodium's constant-time codecs; the
/// returned `String`s cannot be wiped, so keep them short-lived, and they never appear in
/// `description`.
extension VaultKey {
    /// Reads 64 hexadecimal digits (either case; surrounding whitespace is ignored).
    ///
    /// - Throws: ``VaultError/Code/invalidArgument`` for anything else (the text is not echoed).
    public init(hex: String) throws(VaultError) {
        let text = hex.trimmingWhitespaceAndNewlines()
        try self.init(decoding: text, refusal: .keyNotHex) { bytes, input in
            var used = 0
            var end: UnsafePointer<CChar>?
            let status = sodium_hex2bin(bytes, Self.byteCount, input, strlen(input), nil, &used, &end)
            return status == 0 && used == Self.byteCount && end?.pointee == 0
        }
    }

    /// Reads standard base64 with padding, 44 characters (surrounding whitespace is ignored).
    ///
    /// - Throws: ``VaultError/Code/invalidArgument`` for anything else (the text is not echoed).
    public init(base64: String) throws(VaultError) {
        let text = base64.trimmingWhitespaceAndNewlines()
        try self.init(decoding: text, refusal: .keyNotBase64) { bytes, input in
            var used = 0
            var end: UnsafePointer<CChar>?
            let status = sodium_base642bin(bytes, Self.byteCount, input, strlen(input), nil, &used, &end,
                                           sodium_base64_VARIANT_ORIGINAL)
            return status == 0 && used == Self.byteCount && end?.pointee == 0
        }
    }

    private init(decoding text: String, refusal: VaultError.Reason,
                 _ decode: (UnsafeMutablePointer<UInt8>, UnsafePointer<CChar>) -> Bool) throws(VaultError) {
        try Sodium.ensureInitialized()
        var ok = false
        let bytes = text.withCString { input in
            SecretBytes(count: Self.byteCount) { buffer in
                ok = decode(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), input)
            }
        }
        guard ok else { throw VaultError.invalidArgument(refusal) }
        self.init(unchecked: bytes)
    }

    /// The key as 64 lowercase hexadecimal digits.
    public func hexEncodedString() -> String {
        encoded(capacity: Self.byteCount * 2 + 1) { output, capacity, bytes in
            sodium_bin2hex(output, capacity, bytes, Self.byteCount)
        }
    }

    /// The key as standard base64 with padding (44 characters).
    public func base64EncodedString() -> String {
        // sodium_base64_encoded_len is a macro: 4 characters per 3 bytes, padded, plus the NUL.
        encoded(capacity: (Self.byteCount + 2) / 3 * 4 + 1) { output, capacity, bytes in
            sodium_bin2base64(output, capacity, bytes, Self.byteCount, sodium_base64_VARIANT_ORIGINAL)
        }
    }

    private func encoded(capacity: Int, _ encode: (UnsafeMutablePointer<CChar>, Int, UnsafePointer<UInt8>) -> UnsafeMutablePointer<CChar>?) -> String {
        let output = UnsafeMutablePointer<CChar>.allocate(capacity: capacity)
        defer {
            sodium_memzero(output, capacity)
            output.deallocate()
        }
        withUnsafeBytes { bytes in
            _ = encode(output, capacity, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return String(cString: output)
    }
}

extension VaultKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "VaultKey(redacted)" }
    public var debugDescription: String { "VaultKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
