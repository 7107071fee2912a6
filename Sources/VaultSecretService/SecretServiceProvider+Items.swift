#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CSecretService
import VaultKit

/// What the vault holds, as the Secret Service shows it: the items, and the records of
/// the collections other than the vault's own (CollectionRecord.swift).
struct Contents {
    var items: [ServedItem]
    var records: [String: CollectionRecord]
}

/// The vault's items as Secret Service objects: their numbers (stable while the provider
/// runs), reading and writing them through the store.
extension SecretServiceProvider {
    /// The vault's contents, read afresh (another `vault` command may have changed it);
    /// while locked, as they were at the Lock. An item of a collection that is gone shows
    /// in the vault's own collection.
    func contents() throws(BusError) -> Contents {
        if locked { return lockedContents ?? Contents(items: [], records: [:]) }
        let stored: [VaultItem]
        do {
            stored = try store.items()
        } catch {
            throw .failed("could not read the vault: \(error)")
        }
        var contents = Contents(items: [], records: [:])
        for item in stored where item.service == CollectionRecord.service {
            if let record = CollectionRecord(item) { contents.records[record.id] = record }
        }
        for item in stored where item.service != CollectionRecord.service {
            var served = ServedItem(item)
            if let collection = served.metadata.collection, contents.records[collection] == nil || collection == ObjectPaths.vaultCollectionID {
                served.metadata.collection = nil
            }
            contents.items.append(served)
        }
        return contents
    }

    func allItems() throws(BusError) -> [ServedItem] { try contents().items }

    func path(of item: ServedItem) -> String { path(of: item.key, in: item.collectionID) }

    func path(of key: ItemKey, in collectionID: String) -> String {
        if let id = itemIDs[key] { return ObjectPaths.item(id, in: collectionID) }
        let id = nextItemID
        nextItemID += 1
        itemIDs[key] = id
        itemKeys[id] = key
        return ObjectPaths.item(id, in: collectionID)
    }

    /// The item an item path names, if it exists in the vault now.
    func item(_ id: Int, path: String) throws(BusError) -> ServedItem {
        guard let key = itemKeys[id], let item = try allItems().first(where: { $0.key == key }) else { throw .noSuchObject(path) }
        return item
    }

    func secret(of item: ServedItem) throws(BusError) -> SecretBytes {
        guard !locked else { throw .isLocked }
        do {
            return try store.secret(service: item.key.service, account: item.key.account)
        } catch {
            throw .failed("could not read the secret: \(error)")
        }
    }

    func write(_ secret: SecretBytes, key: ItemKey, label: String, metadata: ItemMetadata) throws(BusError) {
        guard !locked else { throw .isLocked }
        do {
            try store.set(secret, service: key.service, account: key.account, label: label.isEmpty ? nil : label, generic: metadata.encoded())
        } catch {
            throw .failed("could not write the item: \(error)")
        }
    }

    func delete(_ item: ServedItem) throws(BusError) {
        guard !locked else { throw .isLocked }
        do {
            try store.delete(service: item.key.service, account: item.key.account)
        } catch {
            throw .failed("could not delete the item: \(error)")
        }
    }

    /// The paths of the items whose attributes include `attributes`, in one collection or all.
    func search(_ attributes: [String: String], in collectionID: String? = nil) throws(BusError) -> [String] {
        try allItems().filter { item in collectionID.map { item.collectionID == $0 } ?? true && item.matches(attributes) }.map(path(of:))
    }

    /// A secret argument `(oayays)`: decoded with the caller's own session.
    func readSecret(_ call: Call) throws(BusError) -> (secret: SecretBytes, contentType: String) {
        guard try call.reader.enter("r", "oayays") else { throw .invalidArgs("expected a secret (oayays)") }
        let sessionPath = try call.reader.objectPath()
        let parameters = try call.reader.bytes()
        let value = try call.reader.bytes()
        // Copied out below; the bytes in sd-bus's read buffer are cleared either way.
        defer { vkss_wipe_received(value.baseAddress, value.count) }
        let contentType = try call.reader.string()
        try call.reader.exit()
        guard contentType.utf8.count <= AttributeLimits.label else { throw .invalidArgs("content type longer than \(AttributeLimits.label) bytes") }
        let session = try session(sessionPath, of: call.sender)
        return (try session.cipher.decode(parameters: parameters, value: value), contentType)
    }

    /// Writes a secret `(oayays)` for the caller's session.
    func writeSecret(_ secret: SecretBytes, contentType: String, sessionPath: String, for sender: String, to writer: BusWriter) throws(BusError) {
        let session = try session(sessionPath, of: sender)
        let (parameters, value) = try session.cipher.encode(secret)
        try writer.open("r", "oayays")
        try writer.objectPath(sessionPath)
        try writer.bytes(parameters)
        try writer.bytes(value)
        try writer.string(contentType)
        try writer.close()
    }

    func session(_ path: String, of sender: String) throws(BusError) -> SecretSession {
        guard let session = sessions[path], session.owner == sender else { throw .noSession }
        return session
    }
}
