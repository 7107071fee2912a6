#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value that can be an item's secret: what every `set`, `add` and `update` takes, on
/// ``Vault``, its `async` twins, ``VaultService`` and ``VaultBatch`` alike, so the same
/// secret can be written through any of them.
///
/// `String` (its UTF-8 bytes), `Data`, `[UInt8]` and ``SecretBytes`` conform. A
/// ``SecretBytes`` is written as it is, without a copy; the others are copied into
/// protected memory, and that copy is wiped once the item is sealed (the value you passed
/// is yours: VaultKit cannot wipe a `String` or an `Array`).
///
/// Conform a type of your own to write it directly:
///
/// ```swift
/// struct APIToken: SecretBytesConvertible {
///     var raw: SecretBytes
///     var secretBytes: SecretBytes { raw }
/// }
/// try vault.set(token, service: "api.example.com", account: "alice")
/// ```
public protocol SecretBytesConvertible {
    /// The bytes to seal, in protected memory. Build them without an unprotected copy
    /// where you can (``SecretBytes/init(count:initializingWith:)``): VaultKit wipes the
    /// value it gets when it is done with it, but not copies you made on the way.
    var secretBytes: SecretBytes { get }
}

extension SecretBytes: SecretBytesConvertible {
    /// The secret itself: copies share memory, so nothing is copied.
    public var secretBytes: SecretBytes { self }
}

extension String: SecretBytesConvertible {
    /// A protected copy of the string's UTF-8 bytes, without normalisation.
    public var secretBytes: SecretBytes { SecretBytes(self) }
}

extension Data: SecretBytesConvertible {
    /// A protected copy of the bytes.
    public var secretBytes: SecretBytes { SecretBytes(self) }
}

extension Array: SecretBytesConvertible where Element == UInt8 {
    /// A protected copy of the bytes.
    public var secretBytes: SecretBytes { SecretBytes(self) }
}
