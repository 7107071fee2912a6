#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// org.freedesktop.DBus.Properties for each object: Get, GetAll and Set (the labels and
/// an item's attributes are writable).
extension SecretServiceProvider {
    private static func propertyNames(of object: ServedObject) -> [String] {
        switch object {
        case .service: ["Collections"]
        case .collection: ["Items", "Label", "Locked", "Created", "Modified"]
        case .item: ["Locked", "Attributes", "Label", "Created", "Modified"]
        case .session, .prompt: []
        }
    }

    func properties(_ call: Call, of object: ServedObject) throws(BusError) {
        let reader = call.reader, writer = call.writer
        let interface = try reader.string()
        guard interface.isEmpty || interface == mainInterface(of: object) else {
            throw .invalidArgs("no interface \(interface) on \(call.path)")
        }
        switch call.member {
        case "Get":
            let name = try reader.string()
            try writeProperty(name, of: object, to: writer)
        case "GetAll":
            try writer.open("a", "{sv}")
            for name in Self.propertyNames(of: object) {
                try writer.open("e", "sv")
                try writer.string(name)
                try writeProperty(name, of: object, to: writer)
                try writer.close()
            }
            try writer.close()
        case "Set":
            let name = try reader.string()
            try setProperty(name, of: object, reader: reader, path: call.path)
        default:
            throw .unknownMethod("org.freedesktop.DBus.Properties", call.member)
        }
    }

    private func writeProperty(_ name: String, of object: ServedObject, to writer: BusWriter) throws(BusError) {
        func timestamp(_ date: Date) throws(BusError) {
            try writer.open("v", "t")
            try writer.uint64(UInt64(max(0, date.timeIntervalSince1970)))
            try writer.close()
        }
        switch (object, name) {
        case (.service, "Collections"):
            try writer.open("v", "ao")
            try writer.objectPaths(collectionIDs(try contents()).map { ObjectPaths.collection($0) })
        case (.collection(let id), "Items"):
            try writer.open("v", "ao")
            try writer.objectPaths(try allItems().filter { $0.collectionID == id }.map(path(of:)))
        case (.collection(let id), "Label"):
            try writer.open("v", "s")
            try writer.string(label(ofCollection: id, in: try contents()))
        case (.collection, "Locked"), (.item, "Locked"):
            try writer.open("v", "b")
            try writer.bool(locked)
        case (.collection(let id), "Created"):
            return try timestamp(try contents().records[id]?.created ?? started)
        case (.collection(let id), "Modified"):
            let contents = try contents()
            return try timestamp(([contents.records[id]?.modified] + contents.items.filter { $0.collectionID == id }.map(\.modified)).compactMap { $0 }.max() ?? started)
        case (.item(let id), "Attributes"):
            try writer.open("v", "a{ss}")
            try writer.stringDictionary(try item(id, path: ObjectPaths.item(id)).metadata.attributes)
        case (.item(let id), "Label"):
            try writer.open("v", "s")
            try writer.string(try item(id, path: ObjectPaths.item(id)).label)
        case (.item(let id), "Created"):
            return try timestamp(try item(id, path: ObjectPaths.item(id)).created)
        case (.item(let id), "Modified"):
            return try timestamp(try item(id, path: ObjectPaths.item(id)).modified)
        default:
            throw .invalidArgs("no property \(name)")
        }
        try writer.close()
    }

    private func setProperty(_ name: String, of object: ServedObject, reader: BusReader, path: String) throws(BusError) {
        switch (object, name) {
        case (.collection(let id), "Label"):
            guard reader.variantContents() == "s", try reader.enter("v", "s") else { throw .invalidArgs("Label is a string") }
            let label = try reader.string()
            guard label.utf8.count <= AttributeLimits.label else { throw .invalidArgs("label longer than \(AttributeLimits.label) bytes") }
            try setLabel(ofCollection: id, to: label)
        case (.item(let id), "Label"):
            guard reader.variantContents() == "s", try reader.enter("v", "s") else { throw .invalidArgs("Label is a string") }
            let label = try reader.string()
            guard label.utf8.count <= AttributeLimits.label else { throw .invalidArgs("label longer than \(AttributeLimits.label) bytes") }
            let item = try item(id, path: path)
            try write(try secret(of: item), key: item.key, label: label, metadata: item.metadata)
            emit("ItemChanged", item: path)
        case (.item(let id), "Attributes"):
            guard reader.variantContents() == "a{ss}", try reader.enter("v", "a{ss}") else { throw .invalidArgs("Attributes is a{ss}") }
            let attributes = try reader.stringDictionary()
            let item = try item(id, path: path)
            var metadata = item.metadata
            metadata.attributes = attributes
            try write(try secret(of: item), key: item.key, label: item.label, metadata: metadata)
            emit("ItemChanged", item: path)
        default:
            throw BusError("org.freedesktop.DBus.Error.PropertyReadOnly", "property \(name) cannot be set")
        }
    }
}
