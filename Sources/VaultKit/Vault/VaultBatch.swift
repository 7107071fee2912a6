#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The writes of one ``Vault/batch(_:)->_`` call, applied together in one transaction.
///
/// Each method behaves like the `Vault` method of the same name; nothing is visible
/// to other processes, or durable, until the batch's closure returns.
///
/// A batch is only valid inside its closure, on the closure's thread: used after the
/// closure returned (kept in a variable, say) or from another thread, every method
/// throws ``VaultError/batchEnded`` and writes nothing.
public struct VaultBatch {
    private let unlocked: UnlockedVault
    private let scope: BatchScope

    init(vault: UnlockedVault, scope: BatchScope) {
        self.unlocked = vault
        self.scope = scope
    }

    /// The vault state to write through, once the batch is known to be still open.
    private var vault: UnlockedVault {
        get throws(VaultError) {
            guard scope.isOpen.load(ordering: .acquiring), scope.thread == ThreadIdentity.current else { throw .batchEnded }
            return unlocked
        }
    }

    /// Adds or updates an item; see ``Vault/set(_:service:account:label:generic:keepHistory:)-6l104``.
    public func set(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        try vault.write(.set, secret: secret.secretBytes, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    /// Adds an item; throws ``VaultError/duplicateItem`` if it exists.
    public func add(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        try vault.write(.add, secret: secret.secretBytes, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    /// Updates an item; throws ``VaultError/itemNotFound`` if it does not exist.
    public func update(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        try vault.write(.update, secret: secret.secretBytes, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    /// Deletes an item; returns whether it existed.
    @discardableResult
    public func delete(service: String, account: String, keepHistory: Bool = true) throws(VaultError) -> Bool {
        try vault.delete(service: service, account: account, keepHistory: keepHistory)
    }

    /// Deletes every item of a service; returns how many.
    @discardableResult
    public func deleteAll(service: String, keepHistory: Bool = true) throws(VaultError) -> Int {
        try vault.deleteAll(service: service, keepHistory: keepHistory)
    }
}
