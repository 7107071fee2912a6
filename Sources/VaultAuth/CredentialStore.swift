import Foundation
import VaultKit

/// A user's password for one issuer, stored as a vault item, for ``StoredCredentialsStrategy``.
///
/// The item's service is `"vaultauth.credentials:" + issuer`, its account the user name,
/// its secret the password.
public struct CredentialStore: Sendable {
    public let vault: Vault
    public let issuer: String
    /// The user name sent with the password.
    public let account: String

    public init(vault: Vault, issuer: String, account: String) {
        self.vault = vault
        self.issuer = issuer
        self.account = account
    }

    var service: String { "vaultauth.credentials:\(issuer)" }

    /// Stores the password, replacing any stored one.
    public func save(password: String) throws(TokenStoreError) {
        do {
            try vault.set(password, service: service, account: account, label: "VaultAuth credentials")
        } catch {
            throw .vault(error)
        }
    }

    /// The stored password, or `nil` if there is none.
    public func password() throws(TokenStoreError) -> String? {
        do {
            return try vault.string(service: service, account: account)
        } catch VaultError.itemNotFound {
            return nil
        } catch {
            throw .vault(error)
        }
    }

    /// Deletes the stored password; returns whether there was one.
    @discardableResult
    public func clear() throws(TokenStoreError) -> Bool {
        do {
            return try vault.delete(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }
}
