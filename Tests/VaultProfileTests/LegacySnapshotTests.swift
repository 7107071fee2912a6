import Foundation
import Testing
import VaultKit
import VaultProfile

/// Snapshots written before VaultKit had values (the profile's JSON as the secret, its
/// schema version as `{"schemaVersion":N}` in the item's generic data) still load.
@Suite struct LegacySnapshotTests {
    /// Writes alice's snapshot exactly as VaultProfile wrote it before.
    func writeLegacySnapshot(_ json: String, schemaVersion: Int, in vault: Vault) throws {
        try vault.set(json, service: testService, account: "alice", label: VaultProfileStorage.itemLabel,
                      generic: Data(#"{"schemaVersion":\#(schemaVersion)}"#.utf8))
    }

    @Test func aLegacySnapshotLoadsAndIsRewrittenInTheValueEncoding() async throws {
        let vault = try makeVault()
        try writeLegacySnapshot(#"{"bio":"hi","nickname":"Alice"}"#, schemaVersion: 1, in: vault)
        let store = ProfileStore<TestProfile>(vault: vault, service: testService)
        guard case .loaded(let profile) = try await store.start(account: "alice") else { Issue.record("expected .loaded"); return }
        #expect(profile == TestProfile(nickname: "Alice", bio: "hi"))
        #expect(try await vault.entry(service: testService, account: "alice")?.holdsValue == false)

        try await store.update { $0.bio = "updated" }
        try await store.shutdown()
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 1)
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "Alice", bio: "updated"))
        let next = ProfileStore<TestProfile>(vault: vault, service: testService)
        #expect(try await next.start(account: "alice").profile == TestProfile(nickname: "Alice", bio: "updated"))
    }

    @Test func aLegacySnapshotOfAnOldSchemaReachesTheHookWithItsJSONAndVersion() async throws {
        struct ProfileV1: Codable { var name: String }
        let vault = try makeVault()
        try writeLegacySnapshot(#"{"name":"Alice Liddell"}"#, schemaVersion: 1, in: vault)
        let seen = Recorder<Int>()
        let store = ProfileStore<TestProfile>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2),
            migration: { stored in
                seen.append(stored.schemaVersion)
                return .migrate(TestProfile(nickname: try JSONDecoder().decode(ProfileV1.self, from: stored.data).name))
            }
        )
        guard case .migrated(let profile, fromVersion: 1) = try await store.start(account: "alice") else { Issue.record("expected .migrated"); return }
        #expect(profile == TestProfile(nickname: "Alice Liddell"))
        #expect(seen.all == [1])
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 2)
    }

    @Test func aLegacySnapshotWithoutAVersionIsVersionZero() throws {
        let vault = try makeVault()
        try vault.set(#"{"nickname":"A"}"#, service: testService, account: "alice")
        let loaded = try VaultProfileStorage(vault: vault, service: testService).load(account: "alice")
        #expect(loaded == StoredProfileSnapshot(data: Data(#"{"nickname":"A"}"#.utf8), schemaVersion: 0))
    }

    @Test func theStorageRoundTripsTheSnapshotBytesAndVersion() throws {
        let vault = try makeVault()
        let storage = VaultProfileStorage(vault: vault, service: testService)
        let snapshot = StoredProfileSnapshot(data: Data(#"{"bio":"","nickname":"B"}"#.utf8), schemaVersion: 7)
        try storage.save(snapshot, account: "bob")
        #expect(try storage.load(account: "bob") == snapshot)
        #expect(try storage.load(account: "nobody") == nil)
        let secret = try vault.string(service: testService, account: "bob")
        #expect(secret == "vaultkit-value 1 7\n" + #"{"bio":"","nickname":"B"}"#)
        // Typed: the catch gets a VaultError without a cast.
        vault.close()
        do {
            _ = try storage.load(account: "bob")
            Issue.record("read a closed vault")
        } catch {
            #expect(error == .closed)
        }
    }
}
