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
    func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws
    func add(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws
    func update(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws
    @discardableResult func delete(service: String, account: String, keepHistory: Bool) throws -> Bool
    @discardableResult func deleteAll(service: String, keepHistory: Bool) throws -> Int
    func items(service: String?) throws -> [VaultItem]
    @discardableResult func verify() throws -> Int

    // Item history (docs/CLI.md, "Item history").
    func history(service: String, account: String) throws -> [VaultItemVersion]
    func itemWithSecret(service: String, account: String, version: UInt64) throws -> (item: VaultItem, secret: SecretBytes)
    func restore(service: String, account: String, version: UInt64) throws
    /// Every kept version of the item, or of every item when `item` is `nil`.
    func purgeHistory(of item: (service: String, account: String)?) throws -> Int
    func changes(limit: Int?) throws -> [VaultChange]
    func historyRetention() throws -> Int
    func setHistoryRetention(_ versions: Int) throws

    func close()
}

extension Vault: ItemStore {
    package func purgeHistory(of item: (service: String, account: String)?) throws -> Int {
        if let item { try purgeHistory(service: item.service, account: item.account) } else { try purgeHistory() }
    }
}
