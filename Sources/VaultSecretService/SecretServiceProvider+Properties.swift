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
        case .session: []
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
            try writer.objectPaths([ObjectPaths.collection])
        case (.collection, "Items"):
            try writer.open("v", "ao")
            try writer.objectPaths(try allItems().map { path(of: $0.key) })
        case (.collection, "Label"):
            try writer.open("v", "s")
            try writer.string(collectionLabel)
        case (.collection, "Locked"), (.item, "Locked"):
            try writer.open("v", "b")
            try writer.bool(locked)
        case (.collection, "Created"):
            return try timestamp(started)
        case (.collection, "Modified"):
            return try timestamp(try allItems().map(\.modified).max() ?? started)
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
        case (.collection, "Label"):
            guard reader.variantContents() == "s", try reader.enter("v", "s") else { throw .invalidArgs("Label is a string") }
            let label = try reader.string()
            guard label.utf8.count <= AttributeLimits.label else { throw .invalidArgs("label longer than \(AttributeLimits.label) bytes") }
            collectionLabel = label
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
