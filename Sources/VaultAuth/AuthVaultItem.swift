import Foundation
import VaultKit

/// The one vault item a ``TokenStore`` or a ``CredentialStore`` keeps, with vault
/// failures reported as ``TokenStoreError/vault(_:)``: both stores are this item plus
/// their own encoding of the secret.
struct AuthVaultItem: Sendable {
    let vault: Vault
    let service: String
    let account: String
    /// The label written on the item, so that `vault list` shows what it is.
    let label: String

    /// The item and its secret, or `nil` when there is none.
    func entry() throws(TokenStoreError) -> VaultEntry? {
        do {
            return try vault.entry(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }

    /// Stores `secret`, replacing what was stored, in one durable write.
    func set(_ secret: SecretBytes) throws(TokenStoreError) {
        do {
            try vault.set(secret, service: service, account: account, label: label)
        } catch {
            throw .vault(error)
        }
    }

    /// Stores `value` in VaultKit's versioned value encoding.
    func setValue(_ value: some Encodable, schemaVersion: Int) throws(TokenStoreError) {
        do {
            try vault.setValue(value, schemaVersion: schemaVersion, service: service, account: account, label: label)
        } catch .valueNotEncodable {
            throw .undecodable
        } catch {
            throw .vault(error)
        }
    }

    /// Deletes the item; returns whether it existed.
    func clear() throws(TokenStoreError) -> Bool {
        do {
            return try vault.delete(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }

    // MARK: Async twins: the vault's own async calls, so nothing here blocks the pool.

    func entry() async throws(TokenStoreError) -> VaultEntry? {
        do {
            return try await vault.entry(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }

    func set(_ secret: SecretBytes) async throws(TokenStoreError) {
        do {
            try await vault.set(secret, service: service, account: account, label: label)
        } catch {
            throw .vault(error)
        }
    }

    func setValue(_ value: some Encodable, schemaVersion: Int) async throws(TokenStoreError) {
        do {
            try await vault.setValue(value, schemaVersion: schemaVersion, service: service, account: account, label: label)
        } catch .valueNotEncodable {
            throw .undecodable
        } catch {
            throw .vault(error)
        }
    }

    func clear() async throws(TokenStoreError) -> Bool {
        do {
            return try await vault.delete(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }
}
