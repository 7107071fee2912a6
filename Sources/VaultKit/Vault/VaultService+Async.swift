#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `async` twin of every ``VaultService`` call: each forwards to the `async` `Vault`
/// call of the same name, so the vault work runs on the vault's queue, never on the
/// caller's thread (unless the caller's task runs on that queue, ``Vault/executor``).
extension VaultService {
    public func set(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await vault.set(secret, service: name, account: account, label: label, generic: generic)
    }

    public func setValue(_ value: some Encodable, schemaVersion: Int = 0, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await vault.setValue(value, schemaVersion: schemaVersion, service: name, account: account, label: label, generic: generic)
    }

    public func add(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await vault.add(secret, service: name, account: account, label: label, generic: generic)
    }

    public func update(_ secret: some SecretBytesConvertible, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await vault.update(secret, service: name, account: account, label: label, generic: generic)
    }

    @discardableResult
    public func delete(account: String) async throws(VaultError) -> Bool {
        try await vault.delete(service: name, account: account)
    }

    @discardableResult
    public func deleteAll() async throws(VaultError) -> Int {
        try await vault.deleteAll(service: name)
    }

    public func entry(account: String) async throws(VaultError) -> VaultEntry? {
        try await vault.entry(service: name, account: account)
    }

    public func secret(account: String) async throws(VaultError) -> SecretBytes {
        try await vault.secret(service: name, account: account)
    }

    public func string(account: String) async throws(VaultError) -> String {
        try await vault.string(service: name, account: account)
    }

    public func data(account: String) async throws(VaultError) -> Data {
        try await vault.data(service: name, account: account)
    }

    public func value<Value: Decodable>(_ type: Value.Type = Value.self, account: String) async throws(VaultError) -> Value {
        try await vault.value(type, service: name, account: account)
    }

    public func item(account: String) async throws(VaultError) -> VaultItem {
        try await vault.item(service: name, account: account)
    }

    public func contains(account: String) async throws(VaultError) -> Bool {
        try await vault.contains(service: name, account: account)
    }

    public func items() async throws(VaultError) -> [VaultItem] {
        try await vault.items(service: name)
    }

    public func accounts() async throws(VaultError) -> [String] {
        try await items().map(\.account)
    }
}
