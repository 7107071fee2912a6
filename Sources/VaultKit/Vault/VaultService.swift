#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The items of one service in a vault, addressed by account: what a Keychain wrapper
/// such as KeychainAccess calls a keychain for a service.
///
/// Get one with ``Vault/service(_:)``. Each method is the `Vault` method of the same
/// name with this service filled in: same behaviour, same errors, nothing cached.
///
/// ```swift
/// let api = vault.service("api.example.com")
/// try api.set("s3cr3t", account: "alice", label: "Example API")
/// let token = try api.string(account: "alice")                 // "s3cr3t"
/// if let entry = try api.entry(account: "bob") { print(entry.item.modified) }
/// for item in try api.items() { print(item.account) }
/// try api.delete(account: "alice")
/// ```
///
/// It is a small `Sendable` value: make one per call or keep it; it stays valid as long
/// as the vault is open.
public struct VaultService: Sendable {
    /// The vault the items are in.
    public let vault: Vault
    /// The service name, for example `"api.example.com"`.
    public let name: String

    public init(vault: Vault, name: String) {
        self.vault = vault
        self.name = name
    }

    // MARK: Writing

    /// Adds or updates the item of `account`; see ``Vault/set(_:service:account:label:generic:keepHistory:)-6l104``.
    public func set(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try vault.set(secret, service: name, account: account, label: label, generic: generic)
    }

    /// Adds or updates the item of `account` with a `Codable` value; see
    /// ``Vault/setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``.
    public func setValue(_ value: some Encodable, schemaVersion: Int = 0, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try vault.setValue(value, schemaVersion: schemaVersion, service: name, account: account, label: label, generic: generic)
    }

    /// Adds the item of `account`; throws ``VaultError/duplicateItem`` if it exists.
    public func add(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try vault.add(secret, service: name, account: account, label: label, generic: generic)
    }

    /// Replaces the secret of `account`'s item; throws ``VaultError/itemNotFound`` if there is none.
    public func update(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) throws(VaultError) {
        try vault.update(secret, service: name, account: account, label: label, generic: generic)
    }

    /// Deletes the item of `account`; returns whether it existed.
    @discardableResult
    public func delete(account: String) throws(VaultError) -> Bool {
        try vault.delete(service: name, account: account)
    }

    /// Deletes every item of this service; returns how many.
    @discardableResult
    public func deleteAll() throws(VaultError) -> Int {
        try vault.deleteAll(service: name)
    }

    // MARK: Reading

    /// The item and secret of `account`, or `nil` if there is none; see ``Vault/entry(service:account:)-80xap``.
    public func entry(account: String) throws(VaultError) -> VaultEntry? {
        try vault.entry(service: name, account: account)
    }

    /// The secret of `account`; throws ``VaultError/itemNotFound`` if there is none.
    public func secret(account: String) throws(VaultError) -> SecretBytes {
        try vault.secret(service: name, account: account)
    }

    /// The secret of `account` as a `String`.
    public func string(account: String) throws(VaultError) -> String {
        try vault.string(service: name, account: account)
    }

    /// The secret of `account` as `Data`.
    public func data(account: String) throws(VaultError) -> Data {
        try vault.data(service: name, account: account)
    }

    /// The `Codable` value of `account`; see ``Vault/value(_:service:account:)-6vyvb``.
    public func value<Value: Decodable>(_ type: Value.Type = Value.self, account: String) throws(VaultError) -> Value {
        try vault.value(type, service: name, account: account)
    }

    /// The attributes (label, generic data, dates) of `account`'s item, without its secret.
    public func item(account: String) throws(VaultError) -> VaultItem {
        try vault.item(service: name, account: account)
    }

    /// Whether `account` has an item.
    public func contains(account: String) throws(VaultError) -> Bool {
        try vault.contains(service: name, account: account)
    }

    /// The attributes of this service's items, sorted by account.
    public func items() throws(VaultError) -> [VaultItem] {
        try vault.items(service: name)
    }

    /// The accounts that have an item, sorted; KeychainAccess's `allKeys()`.
    public func accounts() throws(VaultError) -> [String] {
        try items().map(\.account)
    }
}

extension Vault {
    /// The items of `service`, addressed by account.
    ///
    /// ```swift
    /// let api = vault.service("api.example.com")
    /// try api.set("s3cr3t", account: "alice")
    /// ```
    public func service(_ name: String) -> VaultService {
        VaultService(vault: self, name: name)
    }
}
