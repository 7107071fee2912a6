#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Secret Service item's attributes and content type, kept in the vault item's generic
/// data (sealed with the item, like everything else in it). The label is the vault
/// item's label.
///
/// Encoding: the line `org.freedesktop.Secret.Item/1`, then a JSON object
/// `{"attributes": {name: value}, "collection": "name", "contentType": "text/plain"}`,
/// `collection` only for an item outside the vault's own collection. A vault item whose
/// generic data is not this (one written by `vault set`) shows as an item with the
/// attributes `service` and `username` set to its names, content type `text/plain`.
package struct ItemMetadata: Equatable, Codable, Sendable {
    package var attributes: [String: String]
    package var contentType: String
    /// The collection the item belongs to (its name in the collection's path); nil for
    /// the vault's own collection.
    package var collection: String?

    package init(attributes: [String: String], contentType: String, collection: String? = nil) {
        self.attributes = attributes
        self.contentType = contentType
        self.collection = collection
    }

    static let header = Array("org.freedesktop.Secret.Item/1\n".utf8)

    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding a struct of strings cannot fail.
        let json = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return Data(Self.header) + json
    }

    /// The metadata in `generic`, or nil when it holds something else.
    package static func decoded(from generic: Data?) -> ItemMetadata? {
        guard let generic, generic.starts(with: header) else { return nil }
        return try? JSONDecoder().decode(ItemMetadata.self, from: generic.dropFirst(header.count))
    }

    /// The metadata of an item written outside the Secret Service.
    package static func implied(service: String, account: String) -> ItemMetadata {
        ItemMetadata(attributes: ["service": service, "username": account], contentType: "text/plain")
    }
}
