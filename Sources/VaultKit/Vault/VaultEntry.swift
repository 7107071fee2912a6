#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One item with its secret, read together from one record, so the two always belong
/// together even while other processes write.
///
/// ``Vault/entry(service:account:)-80xap`` returns one, or `nil` when there is no such item:
/// the one read that answers "is it there?" and "what is it?" in a single step.
///
/// ```swift
/// if let entry = try vault.entry(service: "api.example.com", account: "alice") {
///     print(entry.item.label ?? "-", entry.item.modified)
///     let token = try entry.string()
/// }
/// ```
///
/// Its `description` shows the attributes and never the secret (``SecretBytes`` shows
/// itself as redacted).
public struct VaultEntry: Sendable {
    /// The attributes: service, account, label, generic data, dates.
    public let item: VaultItem
    /// The secret, in memory that is zeroed when released.
    public let secret: SecretBytes

    public init(item: VaultItem, secret: SecretBytes) {
        self.item = item
        self.secret = secret
    }

    /// The secret as a `String`.
    ///
    /// - Throws: ``VaultError/secretNotUTF8`` if the bytes are not UTF-8.
    public func string() throws(VaultError) -> String {
        guard let string = secret.string() else { throw .secretNotUTF8 }
        return string
    }

    /// The secret as `Data` (an ordinary copy, not zeroed by VaultKit).
    public func data() -> Data { secret.data() }

    /// The secret decoded as a value written by ``Vault/setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``.
    ///
    /// - Throws: ``VaultError/valueNotDecodable``, ``VaultError/unsupportedValueEncoding(version:)``.
    public func value<Value: Decodable>(_ type: Value.Type = Value.self) throws(VaultError) -> Value {
        try encodedValue().decode(type)
    }

    /// The secret as a stored value before decoding: its schema version and its JSON,
    /// for migrating values written by an older version of your type.
    ///
    /// - Throws: ``VaultError/valueNotDecodable`` if the secret is not a VaultKit value,
    ///   ``VaultError/unsupportedValueEncoding(version:)``.
    public func encodedValue() throws(VaultError) -> VaultEncodedValue {
        try VaultValueEncoding.unwrap(secret)
    }

    /// Whether the secret is a VaultKit value (of any encoding version), as opposed to
    /// plain bytes or text written with `set`.
    public var holdsValue: Bool { VaultValueEncoding.isEnvelope(secret) }
}
