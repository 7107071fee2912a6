import Foundation

/// A stored profile snapshot as it was read, before decoding: the encoded profile and
/// the schema version it was written with.
public struct StoredProfileSnapshot: Sendable, Equatable {
    /// The encoded profile (JSON written by ``ProfileStore``).
    public var data: Data
    /// The ``ProfileStoreConfiguration/schemaVersion`` in force when it was written;
    /// 0 when the item carries no readable version.
    public var schemaVersion: Int

    public init(data: Data, schemaVersion: Int) {
        self.data = data
        self.schemaVersion = schemaVersion
    }
}

/// Where a ``ProfileStore`` keeps one snapshot per account.
///
/// ``VaultProfileStorage`` is the implementation to use. The protocol exists so that
/// the store can be given a wrapper, for example to count writes in a test or to add
/// metrics, around the real vault. The store calls these methods one at a time, in
/// order, from a background thread, never from the caller's task: they may block.
public protocol ProfileSnapshotStorage: Sendable {
    /// The snapshot stored for `account`, or `nil` when there is none.
    func load(account: String) throws -> StoredProfileSnapshot?
    /// Stores (adds or replaces) the snapshot of `account`; durable when it returns.
    func save(_ snapshot: StoredProfileSnapshot, account: String) throws
    /// Removes the snapshot of `account`; returns whether there was one.
    @discardableResult
    func delete(account: String) throws -> Bool
}
