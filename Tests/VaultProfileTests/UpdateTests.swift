import Foundation
import Testing
import VaultKit
import VaultProfile

@Suite struct UpdateTests {
    /// A store signed in as alice with a first profile, debouncing for long enough that
    /// no write interferes with what a test looks at.
    func signedInStore(_ vault: Vault, storage: (any ProfileSnapshotStorage)? = nil) async throws -> ProfileStore<TestProfile> {
        let store = ProfileStore<TestProfile>(
            storage: storage ?? VaultProfileStorage(vault: vault, service: testService),
            configuration: ProfileStoreConfiguration(debounce: .seconds(3600))
        )
        try await store.start(account: "alice")
        try await store.replace(with: TestProfile(nickname: "n0"))
        return store
    }

    @Test func localUpdatesReachEverySubscriberInOrderAfterTheCurrentValue() async throws {
        let store = try await signedInStore(try makeVault())
        let first = store.updates()
        let second = store.updates()
        for index in 1...20 {
            let updated = try await store.update { $0.nickname = "n\(index)" }
            #expect(updated.nickname == "n\(index)")
            #expect(store.current?.nickname == "n\(index)")
        }
        let expected = (0...20).map { "n\($0)" }
        #expect(try await values(21, of: first).map { $0?.nickname } == expected)
        #expect(try await values(21, of: second).map { $0?.nickname } == expected)

        // A subscriber that joins later starts with the value of that moment.
        let late = store.updates()
        #expect(try await values(1, of: late).map { $0?.nickname } == ["n20"])
    }

    @Test func aThrowingUpdateChangesNothing() async throws {
        let store = try await signedInStore(try makeVault())
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.update { profile in
                profile.nickname = "half-done"
                throw Refused()
            }
        }
        #expect(store.current?.nickname == "n0")
        #expect(await store.profile?.nickname == "n0")
    }

    @Test func remoteUpdatesAreAppliedAndPublishedInOrder() async throws {
        let store = try await signedInStore(try makeVault())
        let subscriber = store.updates()
        let (server, listener) = AsyncStream.makeStream(of: TestProfile.self)
        try await store.follow(server)
        listener.yield(TestProfile(nickname: "r1"))
        listener.yield(TestProfile(nickname: "r2"))
        listener.yield(TestProfile(nickname: "r3", bio: "from the server"))
        let received = try await values(4, of: subscriber)
        #expect(received.map { $0?.nickname } == ["n0", "r1", "r2", "r3"])
        #expect(store.current == TestProfile(nickname: "r3", bio: "from the server"))

        // A local change after the remote ones builds on the latest remote value.
        try await store.update { $0.nickname = "local" }
        #expect(store.current == TestProfile(nickname: "local", bio: "from the server"))
        listener.finish()
    }

    @Test func remoteUpdatesAreWrittenToTheVault() async throws {
        let vault = try makeVault()
        let store = ProfileStore<TestProfile>(vault: vault, service: testService, configuration: ProfileStoreConfiguration(debounce: .milliseconds(50)))
        try await store.start(account: "alice")
        let (server, listener) = AsyncStream.makeStream(of: TestProfile.self)
        try await store.follow(server)
        listener.yield(TestProfile(nickname: "from server"))
        try await waitUntil("the remote profile in the vault") {
            try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "from server")
        }
    }

    @Test func followingRequiresASignedInAccount() async throws {
        let store = ProfileStore<TestProfile>(vault: try makeVault(), service: testService)
        let (server, _) = AsyncStream.makeStream(of: TestProfile.self)
        await #expect(throws: ProfileStoreError.notSignedIn) { try await store.follow(server) }
        await #expect(throws: ProfileStoreError.notSignedIn) { try await store.replace(with: TestProfile(nickname: "x")) }
        // Typed throws: the error is a ProfileStoreError without a cast.
        do {
            try await store.follow(server)
            Issue.record("follow without an account returned")
        } catch {
            #expect(error.code == .notSignedIn)
        }
    }

    @Test func subscriberStreamsEndAtShutdown() async throws {
        let store = try await signedInStore(try makeVault())
        let subscriber = store.updates()
        try await store.shutdown()
        let all = try await withTimeout("the stream to end") {
            var values: [TestProfile?] = []
            for await value in subscriber { values.append(value) }
            return values
        }
        #expect(all.map { $0?.nickname } == ["n0"])
        await #expect(throws: ProfileStoreError.shutDown) { try await store.update { $0.nickname = "late" } }
    }
}

/// The task that reads a remote stream does not outlive the store.
@Suite struct FollowLifetimeTests {
    @Test func aStoreLetGoOfStopsReadingItsRemoteStream() async throws {
        let vault = try makeVault()
        let (server, listener) = AsyncStream.makeStream(of: TestProfile.self)
        let (ended, endedSignal) = AsyncStream.makeStream(of: Void.self)
        listener.onTermination = { _ in endedSignal.finish() }
        do {
            let store = ProfileStore<TestProfile>(vault: vault, service: testService,
                                                  configuration: ProfileStoreConfiguration(debounce: .milliseconds(10)))
            try await store.start(account: "alice")
            try await store.replace(with: TestProfile(nickname: "n0"))
            try await store.follow(server)
            listener.yield(TestProfile(nickname: "from server"))
            try await waitUntil("the remote profile in the vault") {
                try storedProfile(in: vault, account: "alice") == TestProfile(nickname: "from server")
            }
        }
        // The store is gone (its debounced write done): its deinit cancelled the reading task,
        // which ends the server's stream. Before, that task kept the store alive for as long
        // as the stream stayed open.
        try await withTimeout("the remote stream to end") {
            for await _ in ended {}
        }
    }
}
