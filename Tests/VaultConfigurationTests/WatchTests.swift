import Configuration
import Foundation
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing
import TestSupport
import VaultConfiguration
import VaultKit

/// Watching through the running service's polling, fetching, and shutting down.
@Suite struct WatchTests {
    /// Each update of a watched value, in order, as text (`nil` while absent).
    static func strings(_ result: Result<LookupResult, any Error>) throws -> String? {
        guard case .string(let text) = try result.get().value?.content else { return nil }
        return text
    }

    @Test func aWatcherSeesAValueAnotherProcessWrites() async throws {
        let (vault, path, keyFile) = try makeKeyVault()
        defer { vault.close() }
        let provider = try await VaultConfigProvider(vault: vault, service: "svc", pollInterval: .milliseconds(20))
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await provider.run() }
                var writer: ChildProcess?
                let seen = try await provider.watchValue(forKey: ["w-0"], type: .string) { updates in
                    var seen: [String?] = []
                    for await update in updates {
                        seen.append(try Self.strings(update))
                        // Written by a separate process once the watcher has the first value.
                        if seen.count == 1 { writer = try ChildProcess(TestPaths.executable("vault-test-writer"), ["write", path, keyFile, "w", "1"]) }
                        if seen.last == "v-w-0" { break }
                    }
                    return seen
                }
                #expect(seen == [nil, "v-w-0"])
                #expect(await writer?.exit().status == 0)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    @Test func aSnapshotWatcherSeesChangesAndDeletions() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        try await vault.set("one", service: "app", account: "name")
        // A second connection to the same file, as another process would have.
        let other = try await Vault.open(at: vault.location.description, passphrase: "config tests")
        defer { other.close() }
        let provider = try await VaultConfigProvider(vault: vault, service: "app", pollInterval: .milliseconds(20))
        let running = Task { try await provider.run() }
        let seen = try await provider.watchSnapshot { updates in
            var seen: [String?] = []
            for await snapshot in updates {
                let value = try snapshot.value(forKey: ["name"], type: .string).value
                seen.append(value.flatMap { if case .string(let text) = $0.content { text } else { nil } })
                if seen.count == 1 { try await other.set("two", service: "app", account: "name") }
                if seen.last == "two" { _ = try await other.delete(service: "app", account: "name") }
                // `seen.last` is a double optional: the deletion is `.some(nil)`.
                if seen.count > 1, case .some(nil) = seen.last { break }
            }
            return seen
        }
        #expect(seen == ["one", "two", nil])
        running.cancel()
        try await running.value
    }

    @Test func fetchValueReadsTheVaultAgainWithoutTheService() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        try await vault.set("8080", service: "app", account: "http.port")
        let provider = try await VaultConfigProvider(vault: vault, service: "app")
        let other = try await Vault.open(at: vault.location.description, passphrase: "config tests")
        defer { other.close() }
        try await other.set("9090", service: "app", account: "http.port")
        // The in-memory copy is what value() reads until something reloads it ...
        #expect(try provider.value(forKey: ["http", "port"], type: .int).value?.content == .int(8080))
        // ... and fetchValue reloads, seeing the other connection's write.
        #expect(try await provider.fetchValue(forKey: ["http", "port"], type: .int).value?.content == .int(9090))
        #expect(try provider.value(forKey: ["http", "port"], type: .int).value?.content == .int(9090))
        let reader = ConfigReader(provider: provider)
        #expect(try await reader.fetchInt(forKey: "http.port") == 9090)
    }

    @Test func theChangeTokenChangesWithEveryWriteOnly() throws {
        let vault = try makeVault()
        defer { vault.close() }
        let empty = try vault.changeToken()
        #expect(try vault.changeToken() == empty)
        try vault.set("a", service: "s", account: "x")
        let afterSet = try vault.changeToken()
        #expect(afterSet != empty)
        _ = try vault.items()
        _ = try vault.secret(service: "s", account: "x")
        #expect(try vault.changeToken() == afterSet)
        // Even the same secret written again is a new write.
        try vault.set("a", service: "s", account: "x")
        #expect(try vault.changeToken() != afterSet)
        let other = try Vault.open(at: vault.location.description, passphrase: "config tests")
        defer { other.close() }
        let beforeOther = try vault.changeToken()
        #expect(try other.changeToken() == beforeOther)
        _ = try other.delete(service: "s", account: "x")
        #expect(try vault.changeToken() != beforeOther)
    }

    @Test func gracefulShutdownEndsTheService() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        let provider = try await VaultConfigProvider(vault: vault, service: "app", pollInterval: .seconds(3600))
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await provider.run() }
                trigger.triggerGracefulShutdown()
                // Returns although the next poll is an hour away.
                try await group.waitForAll()
            }
        }
    }
}
