#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One change to one item, as ``Vault/changes(limit:)-76x59`` lists them (newest first): when,
/// by which writer, what was done, to which item, and the version it made.
///
/// The log is read from the sealed records themselves (each records who wrote it and
/// why, and each kept version who replaced or deleted it), so it needs the key to read,
/// covers what the vault still holds, and loses what retention trimmed, what
/// ``Vault/purgeHistory()-8d4lb`` removed and the writes made with `keepHistory: false`
/// (only the last of those shows).
public struct VaultChange: Sendable, Hashable {
    /// What a write did to an item.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        /// ``Vault/add(_:service:account:label:generic:keepHistory:)-1l25m`` (a new item).
        case add
        /// ``Vault/set(_:service:account:label:generic:keepHistory:)-6l104``, and every record written
        /// before history existed (record version 1 says nothing of how it was written).
        case set
        /// ``Vault/update(_:service:account:label:generic:keepHistory:)-6so0c``.
        case update
        /// ``Vault/delete(service:account:keepHistory:)-3qa42`` or ``Vault/deleteAll(service:keepHistory:)-4lmus``.
        case delete
        /// ``Vault/restore(service:account:version:)-73zpe``.
        case restore
    }

    /// When the change was made (the writer's clock).
    public let date: Date
    /// Who made it, as the writer named itself (see ``Vault/writer()-5w6ue``); `""` when unknown.
    public let writer: String
    /// What it did.
    public let operation: Operation
    public let service: String
    public let account: String
    /// The version the change wrote (for a delete: the version it archived).
    public let version: UInt64

    public init(date: Date, writer: String, operation: Operation, service: String, account: String, version: UInt64) {
        self.date = date
        self.writer = writer
        self.operation = operation
        self.service = service
        self.account = account
        self.version = version
    }
}
