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
    /// Forgets the vault's keys (Lock): no call reaches the vault until an unlock.
    func lock()
    /// Opens the vault again as it was opened at the start when that needs nobody to type
    /// anything (the agent, a key file, a host key): true once open, false when only a
    /// typed passphrase can open it.
    func unlockWithoutPrompt() throws -> Bool
    /// Opens the vault again with a passphrase typed at an unlock prompt.
    func unlock(passphrase: SecretBytes) throws
}
