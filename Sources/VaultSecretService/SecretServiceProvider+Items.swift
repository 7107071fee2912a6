#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// The vault's items as Secret Service objects: their numbers (stable while the provider
/// runs), reading and writing them through the store.
extension SecretServiceProvider {
    /// Every item of the vault, read afresh (another `vault` command may have changed it).
    func allItems() throws(BusError) -> [ServedItem] {
        do {
            return try store.items().map(ServedItem.init)
        } catch {
            throw .failed("could not read the vault: \(error)")
        }
    }

    func path(of key: ItemKey) -> String {
        if let id = itemIDs[key] { return ObjectPaths.item(id) }
        let id = nextItemID
        nextItemID += 1
        itemIDs[key] = id
        itemKeys[id] = key
        return ObjectPaths.item(id)
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

    /// The paths of the items whose attributes include `attributes`.
    func search(_ attributes: [String: String]) throws(BusError) -> [String] {
        try allItems().filter { $0.matches(attributes) }.map { path(of: $0.key) }
    }

    /// A secret argument `(oayays)`: decoded with the caller's own session.
    func readSecret(_ call: Call) throws(BusError) -> (secret: SecretBytes, contentType: String) {
        guard try call.reader.enter("r", "oayays") else { throw .invalidArgs("expected a secret (oayays)") }
        let sessionPath = try call.reader.objectPath()
        let parameters = try call.reader.bytes()
        let value = try call.reader.bytes()
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
