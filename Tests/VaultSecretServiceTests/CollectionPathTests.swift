import Foundation
import Testing
import VaultKit
@testable import VaultSecretService

/// Collection and alias paths, and how a collection is kept as a vault item.
@Suite struct CollectionPathTests {
    @Test func pathsNameACollectionOrAliasAndItsItems() {
        #expect(ObjectPaths.parse("/org/freedesktop/secrets/collection/Work_2")! == ("Work_2", false, nil))
        #expect(ObjectPaths.parse("/org/freedesktop/secrets/collection/Work_2/i12")! == ("Work_2", false, 12))
        #expect(ObjectPaths.parse("/org/freedesktop/secrets/aliases/default")! == ("default", true, nil))
        #expect(ObjectPaths.item(3, in: "Work") == "/org/freedesktop/secrets/collection/Work/i3")
        for path in ["/org/freedesktop/secrets/collection", "/org/freedesktop/secrets/collection/", "/org/freedesktop/secrets/collection/a-b",
                     "/org/freedesktop/secrets/collection/a/i1/x", "/org/freedesktop/secrets/collection/a/x1", "/org/freedesktop/secrets/collection/a/",
                     "/org/freedesktop/secrets/aliases/", "/org/freedesktop/secrets/session/s1", "/"] {
            #expect(ObjectPaths.parse(path) == nil, "\(path)")
        }
    }

    @Test func aNewCollectionIsNamedFromItsLabel() {
        #expect(CollectionRecord.unusedID(for: "Work Secrets") { _ in false } == "Work_Secrets")
        #expect(CollectionRecord.unusedID(for: "") { _ in false } == "collection")
        #expect(CollectionRecord.unusedID(for: "Ключи") { _ in false } == "_____")
        #expect(CollectionRecord.unusedID(for: "vault") { $0 == "vault" || $0 == "vault_2" } == "vault_3")
        #expect(ObjectPaths.isPathElement(CollectionRecord.unusedID(for: String(repeating: "x/", count: 500)) { _ in false }))
    }

    @Test func aRecordRoundTripsThroughAVaultItem() {
        let record = CollectionRecord(id: "Work", label: "Work", aliases: ["b", "a"])
        let item = VaultItem(service: CollectionRecord.service, account: "Work", label: "Work", generic: record.encodedGeneric(), created: record.created, modified: record.modified)
        #expect(CollectionRecord(item).map { ($0.id, $0.label, $0.aliases.sorted()) }! == ("Work", "Work", ["a", "b"]))
        let other = VaultItem(service: "api.example.com", account: "Work", label: nil, generic: nil, created: Date(), modified: Date())
        #expect(CollectionRecord(other) == nil)
    }

    @Test func anItemsCollectionIsKeptInItsMetadata() {
        let metadata = ItemMetadata(attributes: ["a": "b"], contentType: "text/plain", collection: "Work")
        #expect(ItemMetadata.decoded(from: metadata.encoded()) == metadata)
        // Metadata written before collections existed belongs to the vault's own collection.
        let old = Data("org.freedesktop.Secret.Item/1\n{\"attributes\":{\"a\":\"b\"},\"contentType\":\"text/plain\"}".utf8)
        #expect(ItemMetadata.decoded(from: old)?.collection == nil)
    }
}
