#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// A vault item's names, which identify it in the vault.
struct ItemKey: Hashable {
    let service: String
    let account: String
}

/// A vault item as the Secret Service shows it.
struct ServedItem {
    let key: ItemKey
    let label: String
    var metadata: ItemMetadata
    let generic: Data?
    let created: Date
    let modified: Date

    init(_ item: VaultItem) {
        key = ItemKey(service: item.service, account: item.account)
        label = item.label ?? ""
        metadata = ItemMetadata.decoded(from: item.generic) ?? .implied(service: item.service, account: item.account)
        generic = item.generic
        created = item.created
        modified = item.modified
    }

    /// The name of the collection the item belongs to.
    var collectionID: String { metadata.collection ?? ObjectPaths.vaultCollectionID }

    func matches(_ attributes: [String: String]) -> Bool {
        attributes.allSatisfy { metadata.attributes[$0.key] == $0.value }
    }
}
