#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `set`s of a write transaction waiting to be inserted in one storage call
/// (``GatheringInsertStorage``): each is sealed as a new item, and one that finds an item
/// in place is sealed again over it when the batch goes in (`UnlockedVault.flushPendingInserts`).
///
/// A class for the same reason as ``ManifestChanges``: the ``UnlockedVault`` copy inside a
/// ``VaultBatch`` gathers into the same transaction.
final class PendingInserts {
    struct Entry {
        let sealed: UnlockedVault.SealedItem
        /// Kept to seal again over an item found in place, with its attributes.
        let secret: SecretBytes
        let service: String
        let account: String
        let label: String?
        let generic: Data?
        /// Whether an item found in place is kept as a version.
        let keepHistory: Bool
    }

    private(set) var entries: [Entry] = []
    private var lookupIDs: Set<[UInt8]> = []
    /// A failure while inserting a batch: rows may be in the storage whose manifest terms
    /// are not recorded, so the transaction must not commit.
    var failure: VaultError?

    func contains(lookupID: [UInt8]) -> Bool { lookupIDs.contains(lookupID) }

    func append(_ entry: Entry) {
        entries.append(entry)
        lookupIDs.insert(entry.sealed.lookupID)
    }

    /// The gathered entries, leaving none.
    func take() -> [Entry] {
        defer { entries.removeAll(keepingCapacity: true); lookupIDs.removeAll(keepingCapacity: true) }
        return entries
    }

    func reset() {
        entries.removeAll()
        lookupIDs.removeAll()
        failure = nil
    }
}
