#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// The vault operations the provider needs: the `vault` command adapts the vault it
/// opened (here or through the agent) to this.
package protocol SecretServiceStore: AnyObject {
    func items() throws -> [VaultItem]
    func secret(service: String, account: String) throws -> SecretBytes
    /// Creates or replaces the item with these names.
    func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws
    @discardableResult func delete(service: String, account: String) throws -> Bool
}
