#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One version of an item: a kept earlier version, or the current item
/// (``isCurrent``), as ``Vault/history(service:account:)-1eylc`` lists them. Never the secret:
/// read it with ``Vault/itemWithSecret(service:account:version:)-9ckp5``.
public struct VaultItemVersion: Sendable, Hashable {
    /// The version's number: one more for every write of the item that kept history, never reused.
    public let number: UInt64
    /// The attributes as they were (``VaultItem/modified`` is when this version was written).
    public let item: VaultItem
    /// Who wrote this version (see ``Vault/writer()-5w6ue``); `""` when unknown (written before history).
    public let writer: String
    /// What wrote it.
    public let operation: VaultChange.Operation
    /// When it stopped being the current item; `nil` for the current item.
    public let archived: Date?
    /// Who replaced or deleted it; `nil` for the current item.
    public let archivedBy: String?
    /// What replaced it: ``VaultChange/Operation/set`` or ``VaultChange/Operation/update``
    /// (overwritten), ``VaultChange/Operation/delete``, ``VaultChange/Operation/restore``
    /// (an older version restored over it); `nil` for the current item.
    public let archivedBecause: VaultChange.Operation?
    /// The secret's length in bytes.
    public let secretSize: Int

    /// Whether this is the item as it is now rather than a kept version.
    public var isCurrent: Bool { archived == nil }

    public init(
        number: UInt64, item: VaultItem, writer: String, operation: VaultChange.Operation,
        archived: Date?, archivedBy: String?, archivedBecause: VaultChange.Operation?, secretSize: Int
    ) {
        self.number = number
        self.item = item
        self.writer = writer
        self.operation = operation
        self.archived = archived
        self.archivedBy = archivedBy
        self.archivedBecause = archivedBecause
        self.secretSize = secretSize
    }
}
