#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sealing an item into the row it is stored as, under the current keys.
extension UnlockedVault {
    /// Seals `item` and `secret` into a row under the current keys; the caller computes
    /// the row's index hashes (`lookupID`, `serviceTag`) from the item's names.
    func seal(_ item: VaultItem, secret: SecretBytes, lookupID: [UInt8], serviceTag: [UInt8]) -> SealedItem {
        Self.seal(item, secret: secret, lookupID: lookupID, serviceTag: serviceTag, keys: keys)
    }

    /// ``seal(_:secret:lookupID:serviceTag:)`` with explicit keys, for the same reason as
    /// ``openRecord(keys:lookupID:expected:nonce:sealed:)``.
    static func seal(_ item: VaultItem, secret: SecretBytes, lookupID: [UInt8], serviceTag: [UInt8], keys: KeyHierarchy) -> SealedItem {
        var nonce = SecretBox.Nonce()
        let count = ItemRecord.encodedCount(attributes: item, secretCount: secret.count)
        let sealed = nonce.withUnsafeMutableBytes { nonce in
            secret.withUnsafeBytes { secret in
                SecretBox.seal(plaintextCount: count, key: keys.sealingKey, nonce: nonce) { plaintext in
                    ItemRecord.encode(attributes: item, secret: secret, into: plaintext)
                }
            }
        }
        return SealedItem(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
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

    /// A new item (created and modified now) sealed for its row.
    func sealedAsNew(
        _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, lookupID: [UInt8], serviceTag: [UInt8]
    ) -> SealedItem {
        let now = Date()
        let new = VaultItem(service: service, account: account, label: label, generic: generic, created: now, modified: now)
        return seal(new, secret: secret, lookupID: lookupID, serviceTag: serviceTag)
    }
}
