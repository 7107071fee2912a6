#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `async` twins of ``entry(service:account:)`` and the `Codable` value calls, in the
/// style of `Vault+Async.swift`: same names, same errors, the vault work on the vault's
/// own queue. Encoding and decoding JSON is plain computation and happens in the caller's
/// task, so values need not be `Sendable`.
extension Vault {
    public func entry(service: String, account: String) async throws(VaultError) -> VaultEntry? {
        try await offPool { () throws(VaultError) in try self.entry(service: service, account: account) }
    }

    public func setValue(_ value: some Encodable, schemaVersion: Int = 0, service: String, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await set(VaultValueEncoding.encode(value, schemaVersion: schemaVersion), service: service, account: account, label: label, generic: generic)
    }

    public func setValue(_ encoded: VaultEncodedValue, service: String, account: String, label: String? = nil, generic: Data? = nil) async throws(VaultError) {
        try await set(VaultValueEncoding.wrap(encoded), service: service, account: account, label: label, generic: generic)
    }

    public func value<Value: Decodable>(_ type: Value.Type = Value.self, service: String, account: String) async throws(VaultError) -> Value {
        try await VaultValueEncoding.unwrap(secret(service: service, account: account)).decode(type)
    }
}
