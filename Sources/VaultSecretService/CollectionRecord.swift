#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// A collection other than the vault's own, and the vault collection's label and aliases
/// once changed: kept as a vault item (sealed like every item) of the service
/// ``service``, whose account is the collection's name in its path and whose label is the
/// collection's label. Its generic data: the line `org.freedesktop.Secret.Collection/1`,
/// then `{"aliases": [...]}`. The secret is the name again (an item needs one).
package struct CollectionRecord: Equatable, Sendable {
    package static let service = "org.freedesktop.Secret.Collection"
    static let header = Array("org.freedesktop.Secret.Collection/1\n".utf8)

    package var id: String
    package var label: String
    package var aliases: [String]
    package var created: Date
    package var modified: Date

    private struct Stored: Codable {
        var aliases: [String]
    }

    /// The record an item holds, or nil when the item is not one.
    init?(_ item: VaultItem) {
        guard item.service == Self.service, ObjectPaths.isPathElement(item.account) else { return nil }
        let stored = item.generic.flatMap { generic in
            generic.starts(with: Self.header) ? try? JSONDecoder().decode(Stored.self, from: generic.dropFirst(Self.header.count)) : nil
        }
        self.init(id: item.account, label: item.label ?? "", aliases: stored?.aliases ?? [], created: item.created, modified: item.modified)
    }

    package init(id: String, label: String, aliases: [String], created: Date = Date(), modified: Date = Date()) {
        self.id = id
        self.label = label
        self.aliases = aliases
        self.created = created
        self.modified = modified
    }

    func encodedGeneric() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding an array of strings cannot fail.
        let json = (try? encoder.encode(Stored(aliases: aliases.sorted()))) ?? Data("{}".utf8)
        return Data(Self.header) + json
    }

    /// A collection name for `label` that `isTaken` does not refuse: the label's letters,
    /// digits and underscores (others become `_`), else `collection`, then `_2`, `_3`, ….
    package static func unusedID(for label: String, isTaken: (String) -> Bool) -> String {
        let mapped = String(decoding: label.unicodeScalars.prefix(64).map { scalar in
            scalar.isASCII && ObjectPaths.isPathElement(String(scalar)) ? UInt8(scalar.value) : UInt8(ascii: "_")
        }, as: UTF8.self)
        let base = mapped.isEmpty ? "collection" : mapped
        if !isTaken(base) { return base }
        var number = 2
        while isTaken("\(base)_\(number)") { number += 1 }
        return "\(base)_\(number)"
    }
}
