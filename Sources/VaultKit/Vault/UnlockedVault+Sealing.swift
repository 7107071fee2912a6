#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sealing an item into the row it is stored as, under the current keys.
extension UnlockedVault {
    /// Seals `item` and `secret` into a row under the current keys; the caller computes
    /// the row's index hashes (`lookupID`, `serviceTag`) from the item's names (and, for
    /// a kept version, its number).
    func seal(_ item: VaultItem, secret: SecretBytes, provenance: RecordProvenance, lookupID: [UInt8], serviceTag: [UInt8]) -> SealedItem {
        Self.seal(item, secret: secret, provenance: provenance, lookupID: lookupID, serviceTag: serviceTag, keys: keys)
    }

    /// ``seal(_:secret:provenance:lookupID:serviceTag:)`` with explicit keys, for the same reason as
    /// ``openRecord(keys:lookupID:expected:version:nonce:sealed:)``.
    static func seal(_ item: VaultItem, secret: SecretBytes, provenance: RecordProvenance, lookupID: [UInt8], serviceTag: [UInt8], keys: KeyHierarchy) -> SealedItem {
        var nonce = SecretBox.Nonce()
        let count = ItemRecord.encodedCount(attributes: item, secretCount: secret.count, provenance: provenance)
        let sealed = nonce.withUnsafeMutableBytes { nonce in
            secret.withUnsafeBytes { secret in
                SecretBox.seal(plaintextCount: count, key: keys.sealingKey, nonce: nonce) { plaintext in
                    ItemRecord.encode(attributes: item, secret: secret, provenance: provenance, into: plaintext)
                }
            }
        }
        return SealedItem(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    /// The vault's settings sealed into their row under `keys`.
    static func seal(_ settings: SettingsRecord, keys: KeyHierarchy) -> SealedItem {
        var nonce = SecretBox.Nonce()
        let sealed = nonce.withUnsafeMutableBytes { nonce in
            SecretBox.seal(plaintextCount: SettingsRecord.encodedCount, key: keys.sealingKey, nonce: nonce) { settings.encode(into: $0) }
        }
        return SealedItem(lookupID: keys.settingsLookupID, serviceTag: keys.settingsTag, nonce: nonce, sealed: sealed)
    }

    /// A current item's provenance as this handle writes it.
    func provenance(number: UInt64, _ operation: VaultChange.Operation) -> RecordProvenance {
        RecordProvenance(number: number, writer: writer, operation: operation, archive: nil)
    }

    /// A row to write: what ``seal(_:secret:lookupID:serviceTag:)`` returns. The nonce
    /// is inline, so the sealed array is the only allocation of a seal.
    struct SealedItem: Sendable {
        var lookupID: [UInt8]
        var serviceTag: [UInt8]
        var nonce: SecretBox.Nonce
        var sealed: [UInt8]

        /// The row it is stored as.
        var row: StoredRow {
            nonce.withUnsafeBytes { StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array($0), sealed: sealed) }
        }
    }

    /// A new item (created and modified now, not yet numbered) sealed for its row.
    func sealedAsNew(
        _ operation: VaultChange.Operation, _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?,
        lookupID: [UInt8], serviceTag: [UInt8]
    ) -> SealedItem {
        let now = Date()
        let new = VaultItem(service: service, account: account, label: label, generic: generic, created: now, modified: now)
        return seal(new, secret: secret, provenance: provenance(number: 0, operation), lookupID: lookupID, serviceTag: serviceTag)
    }
}
