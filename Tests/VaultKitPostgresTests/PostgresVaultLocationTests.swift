import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
import VaultKitPostgres

/// `Vault.location` for a vault in PostgreSQL: the engine says it is one, by its URL,
/// and the password the URL was given with is not in it.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresVaultLocationTests {
    /// The test role's password, from the cluster's `PGPASSFILE`.
    static func password() throws -> String? {
        guard let file = ProcessInfo.processInfo.environment["PGPASSFILE"] else { return nil }
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        return lines.first { $0.split(separator: ":")[3] == "vaultkit" }.map { String($0.split(separator: ":")[4]) }
    }

    @Test func aVaultsLocationIsItsURLWithoutThePassword() throws {
        let url = try TestServer.url()
        let password = try #require(try Self.password())
        let withPassword = url + (url.contains("?") ? "&" : "?") + "password=" + password
        let location = try PostgresVaultLocation(withPassword, vaultName: "location-" + UUID().uuidString.lowercased())
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        defer { vault.close() }
        #expect(vault.location == .engine(url: location.description))
        #expect(vault.location.description.hasPrefix("postgres"))
        #expect(!vault.location.description.contains(password))
        #expect(!"\(vault.location)".contains(password))
        let reopened = try Vault.open(postgres: location, key: key)
        defer { reopened.close() }
        #expect(reopened.location == vault.location)
    }
}
