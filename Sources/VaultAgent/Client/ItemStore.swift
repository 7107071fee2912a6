#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// The item operations of the commands that read and write items, so that they run the
/// same code whether the vault is opened here or held by the agent.
package protocol ItemStore: AnyObject {
    func contains(service: String, account: String) throws -> Bool
    func secret(service: String, account: String) throws -> SecretBytes
    func item(service: String, account: String) throws -> VaultItem
    func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws
    func add(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws
    func update(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws
    @discardableResult func delete(service: String, account: String) throws -> Bool
    @discardableResult func deleteAll(service: String) throws -> Int
    func items(service: String?) throws -> [VaultItem]
    @discardableResult func verify() throws -> Int
    func close()
}

extension Vault: ItemStore {
    // The writes keep history (`keepHistory: true`), as a `Vault`'s do by default.
    package func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws(VaultError) {
        try set(secret, service: service, account: account, label: label, generic: generic, keepHistory: true)
    }

    package func add(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws(VaultError) {
        try add(secret, service: service, account: account, label: label, generic: generic, keepHistory: true)
    }

    package func update(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws(VaultError) {
        try update(secret, service: service, account: account, label: label, generic: generic, keepHistory: true)
    }

    @discardableResult package func delete(service: String, account: String) throws(VaultError) -> Bool {
        try delete(service: service, account: account, keepHistory: true)
    }

    @discardableResult package func deleteAll(service: String) throws(VaultError) -> Int {
        try deleteAll(service: service, keepHistory: true)
    }
}
