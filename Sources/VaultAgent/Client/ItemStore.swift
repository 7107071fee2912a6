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

extension Vault: ItemStore {}
