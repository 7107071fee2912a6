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

    private var item: AuthVaultItem {
        AuthVaultItem(vault: vault, service: service, account: account, label: "VaultAuth credentials")
    }

    /// Stores the password, replacing any stored one.
    public func save(password: String) throws(TokenStoreError) {
        try item.set(SecretBytes(password))
    }

    /// The stored password, or `nil` if there is none.
    public func password() throws(TokenStoreError) -> String? {
        guard let entry = try item.entry() else { return nil }
        do {
            return try entry.string()
        } catch {
            throw .vault(error)
        }
    }

    /// Deletes the stored password; returns whether there was one.
    @discardableResult
    public func clear() throws(TokenStoreError) -> Bool {
        try item.clear()
    }
}
