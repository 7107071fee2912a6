import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing
import VaultKit
@testable import VaultProfile

@Suite struct PersistenceTests {
    @Test func aBurstOfUpdatesCoalescesIntoOneWrite() async throws {
        let vault = try makeVault()
        let storage = CountingStorage(vault: vault)
        // The window only has to outlast the burst below, a few hundred actor calls.
        let store = ProfileStore<TestProfile>(storage: storage, configuration: ProfileStoreConfiguration(debounce: .seconds(2)))
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "n0"))
        for index in 1...100 {
            try await store.update { $0.nickname = "n\(index)" }
        }
        // Nobody calls persist(): the debounced write must happen by itself.
        try await waitUntil("the debounced write") { await !store.hasUnsavedChanges }
        #expect(storage.saves == 1)
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "n100"))

        // A later change starts a new window and a new write.
        try await store.update { $0.bio = "later" }
        try await waitUntil("the second debounced write") { await !store.hasUnsavedChanges }
        #expect(storage.saves == 2)
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "n100", bio: "later"))
    }

    @Test func persistWritesOnDemandAndOnlyWhenSomethingChanged() async throws {
        let vault = try makeVault()
        let storage = CountingStorage(vault: vault)
        let store = ProfileStore<TestProfile>(storage: storage, configuration: ProfileStoreConfiguration(debounce: .seconds(3600)))
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "Alice"))
        #expect(await store.hasUnsavedChanges)
        #expect(try storedProfile(in: vault, account: "alice") == nil)
        try await store.persist()
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "Alice"))
        #expect(await !store.hasUnsavedChanges)
        try await store.persist()
        #expect(storage.saves == 1)
    }

    @Test func gracefulShutdownWritesTheLastChange() async throws {
        let vault = try makeVault()
        let storage = CountingStorage(vault: vault)
        // Debounced writes never fire here: only the shutdown can save the change.
        let store = ProfileStore<TestProfile>(storage: storage, configuration: ProfileStoreConfiguration(debounce: .seconds(3600)))
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.run() }
                try await store.start(account: "alice")
                try await store.replace(with: TestProfile(nickname: "Alice"))
                try await store.update { $0.bio = "last words" }
                #expect(storage.saves == 0)
                trigger.triggerGracefulShutdown()
                // run() returns only after the final write.
                try await group.waitForAll()
            }
        }
        #expect(storage.saves == 1)
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "Alice", bio: "last words"))
        let next = ProfileStore<TestProfile>(vault: vault, service: testService)
        #expect(try await next.start(account: "alice").profile == TestProfile(nickname: "Alice", bio: "last words"))
    }

    @Test func cancellationAlsoWritesTheLastChange() async throws {
        let vault = try makeVault()
        let store = ProfileStore<TestProfile>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(debounce: .seconds(3600)))
        let running = Task { try await store.run() }
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "cancelled"))
        running.cancel()
        try await running.value
        #expect(try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "cancelled"))
    }

    @Test func theFinalWriteGivesUpAtTheDeadline() async throws {
        let storage = BlockedStorage()
        defer { storage.open() }
        let store = ProfileStore<TestProfile>(
            storage: storage,
            configuration: ProfileStoreConfiguration(debounce: .seconds(3600), shutdownDeadline: .milliseconds(200))
        )
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "stuck"))
        await #expect(throws: ProfileStoreError.shutdownDeadlineExceeded) { try await store.shutdown() }
    }

    @Test func signOutDeletesTheSnapshot() async throws {
        let vault = try makeVault()
        let store = ProfileStore<TestProfile>(vault: vault, service: testService)
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "Alice"))
        try await store.persist()
        await #expect(try vault.contains(service: testService, account: "alice"))
        let subscriber = store.updates()

        try await store.signOut()
        await #expect(try !vault.contains(service: testService, account: "alice"))
        #expect(store.current == nil)
        #expect(store.account == nil)
        #expect(try await values(2, of: subscriber).map { $0?.nickname } == ["Alice", nil])
        await #expect(throws: ProfileStoreError.notSignedIn) { try await store.update { $0.nickname = "ghost" } }

        // Signing in again finds nothing.
        guard case .none = try await store.start(account: "alice") else { Issue.record("expected .none after sign-out"); return }
    }

    @Test func signOutIsNotUndoneByAPendingDebouncedWrite() async throws {
        let vault = try makeVault()
        let debounce = Duration.milliseconds(50)
        let store = ProfileStore<TestProfile>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(debounce: debounce))
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "Alice"))
        try await store.persist()
        try await store.update { $0.nickname = "pending" }
        let window = try #require(await store.lastDebounceTask)
        try await store.signOut()
        // The window's task has ended (cancelled, or woken to find the session gone): no
        // write of it can come later and bring the snapshot back.
        await window.value
        await #expect(try !vault.contains(service: testService, account: "alice"))
    }
}

/// A profile that cannot be encoded is a typed error that quotes none of it.
@Suite struct EncodingFailureTests {
    /// Encoding always fails, with an error whose text quotes a value of the profile.
    struct Unencodable: Codable, Sendable {
        var secret = "SECRET-VALUE"

        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(secret, EncodingError.Context(codingPath: [], debugDescription: "cannot encode \(secret)"))
        }
    }

    @Test func persistingAnUnencodableProfileThrowsEncodingFailed() async throws {
        let vault = try makeVault()
        let store = ProfileStore<Unencodable>(vault: vault, service: testService,
                                              configuration: ProfileStoreConfiguration(debounce: .seconds(3600)))
        try await store.start(account: "alice")
        try await store.replace(with: Unencodable())
        let error = try await #require(throws: ProfileStoreError.self) { try await store.persist() }
        #expect(error == .encodingFailed)
        #expect(error.code == .encodingFailed)
        #expect(!"\(error)".contains("SECRET"), "\(error)")
        #expect(try await vault.entry(service: testService, account: "alice") == nil)
        #expect(await store.hasUnsavedChanges)
    }
}
