#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// Collections besides the vault's own, and aliases: all kept in the vault as
/// ``CollectionRecord`` items, so they last across restarts and are sealed like the items.
/// One vault holds them all, so they lock and unlock together.
extension SecretServiceProvider {
    /// Every collection's name: the vault's own first.
    func collectionIDs(_ contents: Contents) -> [String] {
        [ObjectPaths.vaultCollectionID] + contents.records.keys.filter { $0 != ObjectPaths.vaultCollectionID }.sorted()
    }

    func collectionExists(_ id: String, in contents: Contents) -> Bool {
        id == ObjectPaths.vaultCollectionID || contents.records[id] != nil
    }

    /// The collection an alias names: the record that holds it, else, for `default`, the
    /// vault's own.
    func collectionID(forAlias name: String, in contents: Contents) -> String? {
        contents.records.values.sorted { $0.id < $1.id }.first { $0.aliases.contains(name) }?.id
            ?? (name == "default" ? ObjectPaths.vaultCollectionID : nil)
    }

    /// The collection a path names (its own path or an alias path), if it exists.
    func collectionID(at path: String, in contents: Contents) -> String? {
        guard let parsed = ObjectPaths.parse(path), parsed.item == nil else { return nil }
        let id = parsed.isAlias ? collectionID(forAlias: parsed.name, in: contents) : parsed.name
        return id.flatMap { collectionExists($0, in: contents) ? $0 : nil }
    }

    func label(ofCollection id: String, in contents: Contents) -> String {
        contents.records[id]?.label ?? (id == ObjectPaths.vaultCollectionID ? Self.vaultCollectionLabel : "")
    }

    /// CreateCollection: the collection an existing alias names, else a new one.
    func createCollection(label: String, alias: String) throws(BusError) -> String {
        guard alias.isEmpty || ObjectPaths.isPathElement(alias) else { throw .invalidArgs("an alias is letters, digits and underscores") }
        guard label.utf8.count <= AttributeLimits.label else { throw .invalidArgs("label longer than \(AttributeLimits.label) bytes") }
        guard !locked else { throw .isLocked }
        let contents = try contents()
        if !alias.isEmpty, let existing = collectionID(forAlias: alias, in: contents) { return ObjectPaths.collection(existing) }
        guard contents.records.count < AttributeLimits.collections else { throw .notSupported("more than \(AttributeLimits.collections) collections") }
        let id = CollectionRecord.unusedID(for: label) { collectionExists($0, in: contents) }
        try write(CollectionRecord(id: id, label: label, aliases: alias.isEmpty ? [] : [alias]))
        let path = ObjectPaths.collection(id)
        emit("CollectionCreated", collection: path)
        return path
    }

    /// Collection.Delete: the collection's items and record. The vault's own collection is
    /// the vault, which the Secret Service does not delete.
    func deleteCollection(_ id: String) throws(BusError) {
        guard id != ObjectPaths.vaultCollectionID else { throw .notSupported("the vault's own collection cannot be deleted through the Secret Service") }
        guard !locked else { throw .isLocked }
        let contents = try contents()
        for item in contents.items where item.collectionID == id {
            let itemPath = path(of: item)
            try delete(item)
            emit("ItemDeleted", item: itemPath)
        }
        do {
            try store.delete(service: CollectionRecord.service, account: id)
        } catch {
            throw .failed("could not delete the collection: \(error)")
        }
        emit("CollectionDeleted", collection: ObjectPaths.collection(id))
    }

    /// SetAlias: `name` now names the collection at `target`, or nothing for `/`.
    func setAlias(_ name: String, to target: String) throws(BusError) {
        guard ObjectPaths.isPathElement(name) else { throw .invalidArgs("an alias is letters, digits and underscores") }
        guard !locked else { throw .isLocked }
        let contents = try contents()
        let targetID: String?
        if target == ObjectPaths.noObject {
            targetID = nil
        } else {
            guard let id = collectionID(at: target, in: contents) else { throw .noSuchObject(target) }
            targetID = id
        }
        var changed: [CollectionRecord] = []
        for var record in contents.records.values where record.aliases.contains(name) && record.id != targetID {
            record.aliases.removeAll { $0 == name }
            changed.append(record)
        }
        // `default` names the vault's own collection when no record claims it.
        if let targetID, !(name == "default" && targetID == ObjectPaths.vaultCollectionID) {
            var record = contents.records[targetID] ?? CollectionRecord(id: targetID, label: label(ofCollection: targetID, in: contents), aliases: [])
            if !record.aliases.contains(name) {
                record.aliases.append(name)
                changed.append(record)
            }
        }
        for record in changed {
            try write(record)
            emit("CollectionChanged", collection: ObjectPaths.collection(record.id))
        }
    }

    func setLabel(ofCollection id: String, to label: String) throws(BusError) {
        guard !locked else { throw .isLocked }
        let contents = try contents()
        var record = contents.records[id] ?? CollectionRecord(id: id, label: label, aliases: [])
        record.label = label
        try write(record)
        emit("CollectionChanged", collection: ObjectPaths.collection(id))
    }

    private func write(_ record: CollectionRecord) throws(BusError) {
        do {
            try store.set(SecretBytes(Array(record.id.utf8)), service: CollectionRecord.service, account: record.id, label: record.label.isEmpty ? nil : record.label, generic: record.encodedGeneric())
        } catch {
            throw .failed("could not write the collection: \(error)")
        }
    }
}
