import Foundation
import Logging
import Synchronization
import Testing
import VaultKit
import VaultProfile

/// What the store logs must never include the profile or, above debug, the account.
@Suite struct LoggingTests {
    /// Keeps every message and its metadata as text.
    struct CapturingHandler: LogHandler {
        let lines: Recorder<String>
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            lines.append("\(event.level) \(event.message) \(all.map { "\($0)=\($1)" }.sorted().joined(separator: " "))")
        }
    }

    /// A whole life of a store: load, migrate, change, write, sign out, shut down.
    func logsOfAFullLifecycle(at level: Logger.Level) async throws -> [String] {
        let lines = Recorder<String>()
        let logger = Logger(label: "test") { _ in CapturingHandler(lines: lines, logLevel: level) }
        let vault = try makeVault()
        let old = ProfileStore<TestProfile>(vault: vault, service: testService, logger: logger)
        try await old.start(account: "account-name-7731")
        try await old.replace(with: TestProfile(nickname: "nickname-4242", bio: "bio-9090"))
        try await old.shutdown()

        let store = ProfileStore<TestProfile>(
            vault: vault, service: testService, configuration: ProfileStoreConfiguration(schemaVersion: 2),
            migration: { stored in .migrate(try JSONDecoder().decode(TestProfile.self, from: stored.data)) },
            logger: logger
        )
        try await store.start(account: "account-name-7731")
        try await store.update { $0.nickname = "nickname-5353" }
        try await store.persist()
        try await store.signOut()
        try await store.shutdown()
        return lines.all
    }

    @Test func defaultLevelsLogNeitherProfileNorAccount() async throws {
        let lines = try await logsOfAFullLifecycle(at: .info)
        #expect(lines.contains { $0.contains("profile store started") })
        for line in lines {
            for forbidden in ["nickname-", "bio-", "account-name-"] {
                #expect(!line.contains(forbidden), "\(line)")
            }
        }
    }

    @Test func debugAddsTheAccountButNeverTheProfile() async throws {
        let lines = try await logsOfAFullLifecycle(at: .debug)
        #expect(lines.contains { $0.contains("account-name-7731") })
        #expect(!lines.contains { $0.contains("nickname-") || $0.contains("bio-") })
    }
}
