import Foundation
import Testing
import VaultKit
import VaultProfile

@Suite struct LoadingTests {
    @Test func startWithoutSnapshotReportsNoneAndWritesNothing() async throws {
        let vault = try makeVault()
        let store = ProfileStore<TestProfile>(vault: vault, service: testService)
        let result = try await store.start(account: "alice")
        guard case .none = result else { Issue.record("expected .none, got \(result)"); return }
        #expect(store.current == nil)
        #expect(store.account == "alice")
        await #expect(try vault.items().isEmpty)
        await #expect(throws: ProfileStoreError.noProfile) { try await store.update { $0.nickname = "x" } }
    }

    @Test func startLoadsTheLastSnapshotIntoMemory() async throws {
        let vault = try makeVault()
        let writer = ProfileStore<TestProfile>(vault: vault, service: testService)
        try await writer.start(account: "alice")
        try await writer.replace(with: TestProfile(nickname: "Alice", bio: "hi"))
        try await writer.persist()

        let store = ProfileStore<TestProfile>(vault: vault, service: testService)
        #expect(store.current == nil)
        let result = try await store.start(account: "alice")
        guard case .loaded(let profile) = result else { Issue.record("expected .loaded, got \(result)"); return }
        #expect(profile == TestProfile(nickname: "Alice", bio: "hi"))
        // The synchronous read path, without awaiting the actor.
        #expect(store.current == profile)
        #expect(await store.hasUnsavedChanges == false)

        let item = try await vault.item(service: testService, account: "alice")
        #expect(item.label == VaultProfileStorage.itemLabel)
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 1)
    }

    @Test func snapshotsAreKeyedByAccount() async throws {
        let vault = try makeVault()
        let store = ProfileStore<TestProfile>(vault: vault, service: testService)
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "Alice"))
        // Signing another account in writes the first one back, then loads the second.
        let bob = try await store.start(account: "bob")
        guard case .none = bob else { Issue.record("bob has no snapshot yet, got \(bob)"); return }
        try await store.replace(with: TestProfile(nickname: "Bob"))
        try await store.persist()
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "Alice"))
        #expect(try storedProfile(in: vault, account: "bob") == TestProfile(nickname: "Bob"))
        #expect(try await store.start(account: "alice").profile == TestProfile(nickname: "Alice"))
    }
}

/// An app update changed the profile type: old snapshots never crash the app and are
/// never wiped without the app deciding so.
@Suite struct MigrationTests {
    struct ProfileV1: Codable, Sendable, Equatable {
        var name: String
    }

    struct ProfileV2: Codable, Sendable, Equatable {
        var givenName: String
        var familyName: String
    }

    /// A vault holding alice's snapshot written by version 1 of the app.
    func vaultWithVersion1Snapshot(_ label: String = #function) async throws -> Vault {
        let vault = try makeVault(label)
        let old = ProfileStore<ProfileV1>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 1))
        try await old.start(account: "alice")
        try await old.replace(with: ProfileV1(name: "Alice Liddell"))
        try await old.shutdown()
        return vault
    }

    @Test func migrationHookTurnsAnOldSnapshotIntoTheNewProfile() async throws {
        let vault = try await vaultWithVersion1Snapshot()
        let calls = Recorder<Int>()
        let store = ProfileStore<ProfileV2>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2),
            migration: { stored in
                calls.append(stored.schemaVersion)
                let old = try JSONDecoder().decode(ProfileV1.self, from: stored.data)
                let parts = old.name.split(separator: " ")
                return .migrate(ProfileV2(givenName: String(parts[0]), familyName: String(parts[1])))
            }
        )
        let result = try await store.start(account: "alice")
        let expected = ProfileV2(givenName: "Alice", familyName: "Liddell")
        guard case .migrated(let profile, let fromVersion) = result else { Issue.record("expected .migrated, got \(result)"); return }
        #expect(profile == expected)
        #expect(fromVersion == 1)
        #expect(calls.all == [1])
        #expect(store.current == expected)

        // Written back at once with the new version: the next launch loads it directly.
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 2)
        let next = ProfileStore<ProfileV2>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2))
        guard case .loaded(let loaded) = try await next.start(account: "alice") else { Issue.record("expected .loaded"); return }
        #expect(loaded == expected)
    }

    @Test func withoutAHookAnIncompatibleSnapshotIsKeptNotWiped() async throws {
        let vault = try await vaultWithVersion1Snapshot()
        let before = try await vault.data(service: testService, account: "alice")
        let store = ProfileStore<ProfileV2>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2))
        let result = try await store.start(account: "alice")
        guard case .unreadable(let storedVersion) = result else { Issue.record("expected .unreadable, got \(result)"); return }
        #expect(storedVersion == 1)
        #expect(store.current == nil)
        try await store.shutdown()
        // Untouched, byte for byte, after a whole run of the new version.
        await #expect(try vault.data(service: testService, account: "alice") == before)
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 1)
    }

    @Test func aTypeChangedWithoutBumpingTheVersionAlsoGoesToTheHook() async throws {
        let vault = try await vaultWithVersion1Snapshot()
        let calls = Recorder<Int>()
        let store = ProfileStore<ProfileV2>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 1),
            migration: { stored in
                calls.append(stored.schemaVersion)
                return .keep
            }
        )
        let result = try await store.start(account: "alice")
        guard case .unreadable(1) = result else { Issue.record("expected .unreadable(1), got \(result)"); return }
        #expect(calls.all == [1])
        await #expect(try vault.contains(service: testService, account: "alice"))
    }

    @Test func aThrowingHookKeepsTheSnapshot() async throws {
        let vault = try await vaultWithVersion1Snapshot()
        struct HookFailed: Error {}
        let store = ProfileStore<ProfileV2>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2),
            migration: { _ in throw HookFailed() }
        )
        let result = try await store.start(account: "alice")
        guard case .unreadable(1) = result else { Issue.record("expected .unreadable(1), got \(result)"); return }
        await #expect(try vault.contains(service: testService, account: "alice"))
    }

    @Test func discardingDeletesTheOldSnapshot() async throws {
        let vault = try await vaultWithVersion1Snapshot()
        let store = ProfileStore<ProfileV2>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2),
            migration: { _ in .discard }
        )
        let result = try await store.start(account: "alice")
        guard case .discarded(fromVersion: 1) = result else { Issue.record("expected .discarded(1), got \(result)"); return }
        await #expect(try !vault.contains(service: testService, account: "alice"))
        // The app can then give the account a fresh profile, written with the new version.
        try await store.replace(with: ProfileV2(givenName: "A", familyName: "L"))
        try await store.persist()
        #expect(try storedSchemaVersion(in: vault, account: "alice") == 2)
    }
}
