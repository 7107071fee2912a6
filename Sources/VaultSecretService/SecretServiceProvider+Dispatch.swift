#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// Which object and method a call names, and the methods of the Service, Collection,
/// Item and Session interfaces (properties: SecretServiceProvider+Properties.swift;
/// prompts: SecretServiceProvider+Prompts.swift).
extension SecretServiceProvider {
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"

    func object(at path: String) throws(BusError) -> ServedObject {
        if path == ObjectPaths.service { return .service }
        if let parsed = ObjectPaths.parse(path) {
            let contents = try contents()
            let collection = parsed.isAlias ? collectionID(forAlias: parsed.name, in: contents) : parsed.name
            guard let collection, collectionExists(collection, in: contents) else { throw .noSuchObject(path) }
            guard let id = parsed.item else { return .collection(collection) }
            guard let key = itemKeys[id], contents.items.contains(where: { $0.key == key && $0.collectionID == collection }) else { throw .noSuchObject(path) }
            return .item(id)
        }
        if sessions[path] != nil { return .session(path) }
        if path.hasPrefix(ObjectPaths.promptPrefix), let id = Int(path.dropFirst(ObjectPaths.promptPrefix.count)), prompts[id] != nil { return .prompt(id) }
        throw .noSuchObject(path)
    }

    func dispatch(_ call: Call) throws(BusError) {
        let object = try object(at: call.path)
        let interface = call.interface ?? mainInterface(of: object)
        switch interface {
        case "org.freedesktop.DBus.Properties":
            try properties(call, of: object)
        case "org.freedesktop.DBus.Introspectable" where call.member == "Introspect":
            try call.writer.string(introspection(of: object))
        case mainInterface(of: object):
            switch object {
            case .service: try serviceMethod(call)
            case .collection(let id): try collectionMethod(call, id: id)
            case .item(let id): try itemMethod(call, id: id)
            case .session(let path): try sessionMethod(call, path: path)
            case .prompt(let id): try promptMethod(call, id: id)
            }
        default:
            throw .unknownMethod(interface, call.member)
        }
    }

    func mainInterface(of object: ServedObject) -> String {
        switch object {
        case .service: Self.serviceInterface
        case .collection: Self.collectionInterface
        case .item: Self.itemInterface
        case .session: Self.sessionInterface
        case .prompt: Self.promptInterface
        }
    }

    private func introspection(of object: ServedObject) throws(BusError) -> String {
        switch object {
        case .service: Introspection.document(Introspection.service, children: ["collection", "aliases", "session"])
        case .collection(let id): Introspection.document(Introspection.collection, children: try allItems().filter { $0.collectionID == id }.map { String(path(of: $0).split(separator: "/").last!) })
        case .item: Introspection.document(Introspection.item, children: [])
        case .session: Introspection.document(Introspection.session, children: [])
        case .prompt: Introspection.document(Introspection.prompt, children: [])
        }
    }

    // MARK: Service

    private func serviceMethod(_ call: Call) throws(BusError) {
        let reader = call.reader, writer = call.writer
        switch call.member {
        case "OpenSession":
            let algorithm = try reader.string()
            let cipher: SessionCipher
            var output: [UInt8]? = nil
            switch algorithm {
            case SessionCipher.plainName:
                try reader.skip("v")
                cipher = .plain
            case SessionCipher.dhName:
                guard reader.variantContents() == "ay", try reader.enter("v", "ay") else { throw .invalidArgs("the dh algorithm's input is the client's public key (ay)") }
                let clientKey = try reader.bytes()
                try reader.exit()
                let exchange = try DiffieHellman()
                cipher = .aes(key: try exchange.aesKey(clientPublicKey: clientKey))
                output = exchange.publicKey
            default:
                throw .notSupported("algorithm not supported: use plain or \(SessionCipher.dhName)")
            }
            let path = ObjectPaths.session(nextSessionID)
            nextSessionID += 1
            sessions[path] = SecretSession(owner: call.sender, cipher: cipher)
            if let output {
                try writer.open("v", "ay")
                try writer.bytes(output)
            } else {
                try writer.open("v", "s")
                try writer.string("")
            }
            try writer.close()
            try writer.objectPath(path)
        case "CreateCollection":
            var label = ""
            guard try reader.enter("a", "{sv}") else { throw .invalidArgs("expected properties (a{sv})") }
            while try reader.enter("e", "sv") {
                let name = try reader.string()
                if name == "org.freedesktop.Secret.Collection.Label", reader.variantContents() == "s" {
                    _ = try reader.enter("v", "s")
                    label = try reader.string()
                    try reader.exit()
                } else {
                    try reader.skip("v")
                }
                try reader.exit()
            }
            try reader.exit()
            let alias = try reader.string()
            try writer.objectPath(try createCollection(label: label, alias: alias))
            try writer.objectPath(ObjectPaths.noObject)
        case "SearchItems":
            let found = try search(try reader.stringDictionary())
            try writer.objectPaths(locked ? [] : found)
            try writer.objectPaths(locked ? found : [])
        case "Lock":
            try writer.objectPaths(try lock(try reader.objectPaths().filter(isCollectionOrItem)))
            try writer.objectPath(ObjectPaths.noObject)
        case "Unlock":
            let (unlocked, prompt) = try unlock(try reader.objectPaths().filter(isCollectionOrItem), for: call.sender)
            try writer.objectPaths(unlocked)
            try writer.objectPath(prompt)
        case "GetSecrets":
            let paths = try reader.objectPaths()
            let sessionPath = try reader.objectPath()
            _ = try session(sessionPath, of: call.sender)
            guard !locked else { throw .isLocked }
            let items = try allItems()
            try writer.open("a", "{o(oayays)}")
            for path in paths {
                guard case .item(let id)? = try? object(at: path), let key = itemKeys[id], let item = items.first(where: { $0.key == key }) else { continue }
                try writer.open("e", "o(oayays)")
                try writer.objectPath(path)
                try writeSecret(try secret(of: item), contentType: item.metadata.contentType, sessionPath: sessionPath, for: call.sender, to: writer)
                try writer.close()
            }
            try writer.close()
        case "ReadAlias":
            let name = try reader.string()
            try writer.objectPath(collectionID(forAlias: name, in: try contents()).map { ObjectPaths.collection($0) } ?? ObjectPaths.noObject)
        case "SetAlias":
            let name = try reader.string(), target = try reader.objectPath()
            try setAlias(name, to: target)
        default:
            throw .unknownMethod(Self.serviceInterface, call.member)
        }
    }

    /// Whether Lock and Unlock apply to this path: the collection and its items.
    private func isCollectionOrItem(_ path: String) -> Bool {
        switch try? object(at: path) {
        case .collection?, .item?: true
        default: false
        }
    }

    // MARK: Collection

    private func collectionMethod(_ call: Call, id collectionID: String) throws(BusError) {
        let reader = call.reader, writer = call.writer
        switch call.member {
        case "SearchItems":
            try writer.objectPaths(try search(try reader.stringDictionary(), in: collectionID))
        case "CreateItem":
            var label = "", attributes: [String: String] = [:]
            guard try reader.enter("a", "{sv}") else { throw .invalidArgs("expected properties (a{sv})") }
            while try reader.enter("e", "sv") {
                let name = try reader.string()
                switch (name, reader.variantContents()) {
                case ("org.freedesktop.Secret.Item.Label", "s"?):
                    _ = try reader.enter("v", "s")
                    label = try reader.string()
                    try reader.exit()
                case ("org.freedesktop.Secret.Item.Attributes", "a{ss}"?):
                    _ = try reader.enter("v", "a{ss}")
                    attributes = try reader.stringDictionary()
                    try reader.exit()
                default:
                    try reader.skip("v")
                }
                try reader.exit()
            }
            try reader.exit()
            guard label.utf8.count <= AttributeLimits.label else { throw .invalidArgs("label longer than \(AttributeLimits.label) bytes") }
            let (secret, contentType) = try readSecret(call)
            let replace = try reader.bool()
            guard !locked else { throw .isLocked }
            let items = try allItems()
            let key: ItemKey
            let replaced = replace ? items.first(where: { $0.collectionID == collectionID && $0.metadata.attributes == attributes }) : nil
            if let replaced {
                key = replaced.key
            } else {
                let taken = Set(items.map(\.key))
                let names = ItemNames.unused(for: attributes) { taken.contains(ItemKey(service: $0, account: $1)) }
                key = ItemKey(service: names.service, account: names.account)
            }
            let metadata = ItemMetadata(attributes: attributes, contentType: contentType, collection: collectionID == ObjectPaths.vaultCollectionID ? nil : collectionID)
            try write(secret, key: key, label: label, metadata: metadata)
            let path = path(of: key, in: collectionID)
            emit(replaced == nil ? "ItemCreated" : "ItemChanged", item: path)
            try writer.objectPath(path)
            try writer.objectPath(ObjectPaths.noObject)
        case "Delete":
            try deleteCollection(collectionID)
            try writer.objectPath(ObjectPaths.noObject)
        default:
            throw .unknownMethod(Self.collectionInterface, call.member)
        }
    }

    // MARK: Item

    private func itemMethod(_ call: Call, id: Int) throws(BusError) {
        let item = try item(id, path: call.path)
        let itemPath = path(of: item)
        switch call.member {
        case "GetSecret":
            let sessionPath = try call.reader.objectPath()
            _ = try session(sessionPath, of: call.sender)
            try writeSecret(try secret(of: item), contentType: item.metadata.contentType, sessionPath: sessionPath, for: call.sender, to: call.writer)
        case "SetSecret":
            let (secret, contentType) = try readSecret(call)
            var metadata = item.metadata
            metadata.contentType = contentType
            try write(secret, key: item.key, label: item.label, metadata: metadata)
            emit("ItemChanged", item: itemPath)
        case "Delete":
            try delete(item)
            emit("ItemDeleted", item: itemPath)
            try call.writer.objectPath(ObjectPaths.noObject)
        default:
            throw .unknownMethod(Self.itemInterface, call.member)
        }
    }

    // MARK: Session

    private func sessionMethod(_ call: Call, path: String) throws(BusError) {
        guard call.member == "Close" else { throw .unknownMethod(Self.sessionInterface, call.member) }
        _ = try session(path, of: call.sender)
        sessions[path] = nil
    }
}
