import Dispatch
import Foundation
import Testing
import TestSupport
import VaultKit
import VaultKitPostgres
import VaultProfile

/// VaultProfile unchanged on a vault in PostgreSQL: what one host's store persists, another
/// host's store (its own connection) loads.
@Suite(.enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresProfileTests {
    @Test func aProfileStoreOnAPostgresVaultPersistsAndAnotherHostLoadsIt() async throws {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else {
            Issue.record("VAULTKIT_TEST_POSTGRES_URL is not set: run `eval \"$(scripts/postgres-test-cluster.sh start)\"` first")
            return
        }
        let location = try PostgresVaultLocation(url, vaultName: "profile-" + UUID().uuidString.lowercased())
        let key = VaultKey.random()
        let first = try await offThePool { try Vault.create(postgres: location, key: key) }
        let store = ProfileStore<TestProfile>(vault: first, service: testService, configuration: ProfileStoreConfiguration(debounce: .seconds(3600)))
        let fresh = try await store.start(account: "alice")
        guard case .none = fresh else { Issue.record("a new vault held a profile: \(fresh)"); return }
        try await store.replace(with: TestProfile(nickname: "Alice"))
        try await store.update { $0.bio = "on many hosts" }
        try await store.persist()

        let second = try await offThePool { try Vault.open(postgres: location, key: key) }
        let elsewhere = ProfileStore<TestProfile>(vault: second, service: testService)
        let loaded = try await elsewhere.start(account: "alice")
        guard case .loaded(let profile) = loaded else { Issue.record("not loaded: \(loaded)"); return }
        #expect(profile == TestProfile(nickname: "Alice", bio: "on many hosts"))
        #expect(try await offThePool { try second.verify() } == 1)
    }

    /// Runs blocking vault work (network round trips) on a dispatch thread, not the cooperative pool.
    private func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }
}
