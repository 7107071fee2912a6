import Foundation
import VaultKit

/// Keeps profile snapshots as items of a VaultKit `Vault`: one item per account under
/// one service name.
///
/// Each snapshot is the item (`service`, account): its secret is the profile as a VaultKit
/// value (`Vault.setValue(_:service:account:label:generic:)`),
/// whose schema version is the store's ``ProfileStoreConfiguration/schemaVersion``; its
/// label is `"profile snapshot"`. Like every vault item, all of it, names included, is
/// sealed with XSalsa20-Poly1305; nothing is readable without the vault's passphrase or key.
///
/// Snapshots written before VaultKit had values (the profile's JSON as the secret, the
/// schema version as `{"schemaVersion":N}` in the item's `generic` data) are still read,
/// and are written in the new encoding the next time the profile is saved.
///
/// Pick a service name of your own that no other item uses, such as
/// `"com.example.app.profile"`: ``ProfileStore`` owns every item under it.
public struct VaultProfileStorage: ProfileSnapshotStorage {
    /// The vault that holds the snapshots.
    public let vault: Vault
    /// The service name of the snapshot items.
    public let service: String

    /// The label written on snapshot items, so that `vault list` shows what they are.
    public static let itemLabel = "profile snapshot"

    public init(vault: Vault, service: String) {
        self.vault = vault
        self.service = service
    }

    public func load(account: String) throws(VaultError) -> StoredProfileSnapshot? {
        // One read of one record: the JSON and its schema version always belong together,
        // even while another process writes.
        guard let entry = try vault.entry(service: service, account: account) else { return nil }
        guard entry.holdsValue else {
            return StoredProfileSnapshot(data: entry.data(), schemaVersion: Self.legacySchemaVersion(in: entry.item.generic))
        }
        let stored = try entry.encodedValue()
        return StoredProfileSnapshot(data: stored.json.data(), schemaVersion: stored.schemaVersion)
    }

    public func save(_ snapshot: StoredProfileSnapshot, account: String) throws(VaultError) {
        try vault.setValue(
            VaultEncodedValue(schemaVersion: snapshot.schemaVersion, json: SecretBytes(snapshot.data)),
            service: service, account: account, label: Self.itemLabel
        )
    }

    @discardableResult
    public func delete(account: String) throws(VaultError) -> Bool {
        try vault.delete(service: service, account: account)
    }

    /// The `generic` data of snapshots written before VaultKit had values.
    private struct LegacyGeneric: Decodable {
        var schemaVersion: Int
    }

    static func legacySchemaVersion(in generic: Data?) -> Int {
        guard let generic, let decoded = try? JSONDecoder().decode(LegacyGeneric.self, from: generic) else { return 0 }
        return decoded.schemaVersion
    }
}
