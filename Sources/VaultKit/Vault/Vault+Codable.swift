#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Vault {
    /// Stores a `Codable` value as the secret of (`service`, `account`), adding or
    /// updating the item like ``set(_:service:account:label:generic:keepHistory:)-6l104``.
    ///
    /// The value is sealed like any secret, in a versioned encoding (a short header, then
    /// JSON; see <doc:Migrating>), so a later VaultKit can still read it and a value from
    /// a newer one is refused with a clear error rather than misread.
    ///
    /// ```swift
    /// struct Login: Codable { var user: String; var token: String; var expires: Date }
    /// try vault.setValue(Login(user: "alice", token: "t0k3n", expires: .now), service: "api.example.com", account: "alice")
    /// let login = try vault.value(Login.self, service: "api.example.com", account: "alice")
    /// ```
    ///
    /// - Parameters:
    ///   - value: what to store; it is encoded as JSON.
    ///   - schemaVersion: your own version of the value type's shape, read back with
    ///     ``VaultEncodedValue/schemaVersion`` to migrate old values; 0 if you need none.
    ///   - service: what the value is for, as in `set`.
    ///   - account: whose value it is within the service.
    ///   - label: a name for people; `nil` keeps the stored label.
    ///   - generic: application data; `nil` keeps the stored data.
    /// - Throws: ``VaultError/valueNotEncodable``, and the errors of `set`.
    public func setValue(_ value: some Encodable, schemaVersion: Int = 0, service: String, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try set(VaultValueEncoding.encode(value, schemaVersion: schemaVersion), service: service, account: account, label: label, generic: generic)
    }

    /// Stores a value that is already encoded, with its schema version, in the same
    /// encoding as ``setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``.
    public func setValue(_ encoded: VaultEncodedValue, service: String, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try set(VaultValueEncoding.wrap(encoded), service: service, account: account, label: label, generic: generic)
    }

    /// The value stored with ``setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``.
    ///
    /// For "nil when missing", use ``entry(service:account:)-80xap`` and ``VaultEntry/value(_:)``.
    ///
    /// - Throws: ``VaultError/itemNotFound``, ``VaultError/valueNotDecodable``,
    ///   ``VaultError/unsupportedValueEncoding(version:)``, and the errors of ``secret(service:account:)-5mo0z``.
    public func value<Value: Decodable>(_ type: Value.Type = Value.self, service: String, account: String) throws(VaultError) -> Value {
        try VaultValueEncoding.unwrap(secret(service: service, account: account)).decode(type)
    }
}

extension VaultBatch {
    /// Stores a `Codable` value; see ``Vault/setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``.
    public func setValue(_ value: some Encodable, schemaVersion: Int = 0, service: String, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try set(VaultValueEncoding.encode(value, schemaVersion: schemaVersion), service: service, account: account, label: label, generic: generic)
    }
}
