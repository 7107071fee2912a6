import Foundation
import VaultKit

/// Keeps profile snapshots as items of a ``VaultKit/Vault``: one item per account under
/// one service name.
///
/// Each snapshot is the item (`service`, account): its secret is the JSON-encoded profile,
/// its `generic` data records the schema version (`{"schemaVersion":N}`), and its label is
/// `"profile snapshot"`. Like every vault item, all of it, names included, is sealed with
/// XSalsa20-Poly1305; nothing is readable without the vault's passphrase or key.
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

    public func load(account: String) throws -> StoredProfileSnapshot? {
        // One read of one record: the JSON and its schema version always belong together,
        // even while another process writes.
        do {
            let (item, secret) = try vault.itemWithSecret(service: service, account: account)
            return StoredProfileSnapshot(data: secret.data(), schemaVersion: Self.schemaVersion(in: item.generic))
        } catch VaultError.itemNotFound {
            return nil
        }
    }

    public func save(_ snapshot: StoredProfileSnapshot, account: String) throws {
        try vault.set(
            SecretBytes(snapshot.data), service: service, account: account,
            label: Self.itemLabel, generic: Self.generic(schemaVersion: snapshot.schemaVersion)
        )
    }

    @discardableResult
    public func delete(account: String) throws -> Bool {
        try vault.delete(service: service, account: account)
    }

    private struct Generic: Codable {
        var schemaVersion: Int
    }

    static func generic(schemaVersion: Int) -> Data {
        // Encoding one Int cannot fail.
        (try? JSONEncoder().encode(Generic(schemaVersion: schemaVersion))) ?? Data()
    }

    static func schemaVersion(in generic: Data?) -> Int {
        guard let generic, let decoded = try? JSONDecoder().decode(Generic.self, from: generic) else { return 0 }
        return decoded.schemaVersion
    }
}
