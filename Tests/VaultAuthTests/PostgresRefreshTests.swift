import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit
import VaultKitPostgres

/// Client processes on different hosts (simulated as processes, each with its own database
/// session) sharing one account's tokens in one PostgreSQL vault.
@Suite(.enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server"), .serialized) struct PostgresRefreshTests {
    /// Both processes find the access token expired at once: the refresh lock, an advisory
    /// lock in the database, lets one ask the token endpoint while the other waits and then
    /// adopts its tokens from the vault. A lock file beside the vault could not do this
    /// across hosts (and a vault in a database has no "beside").
    @Test func twoProcessesOnOnePostgresVaultRefreshOnceAndStaySignedIn() async throws {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else {
            Issue.record("VAULTKIT_TEST_POSTGRES_URL is not set: run `eval \"$(scripts/postgres-test-cluster.sh start)\"` first")
            return
        }
        let server = try await TestAuthServer.start()
        defer { server.stop() }
        let name = "auth-" + UUID().uuidString.lowercased()
        let key = VaultKey.random()
        let vault = try await offPool { try Vault.create(postgres: PostgresVaultLocation(url, vaultName: name), key: key) }
        let issuer = server.baseURL.absoluteString
        let login = StoredCredentialsStrategy(tokenEndpoint: server.tokenURL, client: .none(clientID: "vaultauth-tests"),
                                              credentials: CredentialStore(vault: vault, issuer: issuer, account: "alice"))
        try await offPool { try CredentialStore(vault: vault, issuer: issuer, account: "alice").save(password: "wonderland") }
        var expired = try await login.relogin(transport: URLSessionTransport())
        // Tokens both processes will believe expired (the server still takes them).
        expired.issuedAt = Date().addingTimeInterval(-600)
        expired.expiresAt = Date().addingTimeInterval(-300)
        try await TokenStore(vault: vault, issuer: issuer, account: "alice").save(expired)

        let environment = ChildProcess.cleanEnvironment(["VAULT_AUTH_TEST_KEY": key.hexEncodedString(), "VAULT_AUTH_TEST_NO_RELOGIN": "1"])
        let apps = try (0..<2).map { _ in
            try ChildProcess(TestPaths.executable("vault-auth-test-client"), ["send-on-go", "pg:" + name, issuer],
                             environment: environment, standardInput: nil)
        }
        defer { apps.forEach { $0.send(SIGKILL) } }
        for app in apps {
            #expect(try await offPool { app.waitForOutput(containing: "READY", timeout: .seconds(120)) }, "\(String(decoding: app.outputSoFar, as: UTF8.self))")
        }
        for app in apps { try app.write(Data("GO\n".utf8)) }
        for app in apps {
            let result = try await offPool { app.wait(timeout: .seconds(120)) }
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("STATUS 200"))
        }

        #expect(server.counters.refreshRequests == 1)
        #expect(server.counters.reuseDetections == 0)
        #expect(server.counters.passwordLogins == 1)
        let stored = try #require(try await TokenStore(vault: vault, issuer: issuer, account: "alice").load())
        #expect(stored.refreshToken != expired.refreshToken)
    }
}
