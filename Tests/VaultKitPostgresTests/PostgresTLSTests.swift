import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres
#if canImport(Glibc)
import Glibc
#endif

/// TLS with certificate verification (`sslmode=verify-full`): the test server has TLS on,
/// with a certificate for 127.0.0.1 from a throwaway CA (scripts/postgres-test-cluster.sh).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresTLSTests {
    static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            Issue.record("\(name) is not set: run `eval \"$(scripts/postgres-test-cluster.sh start)\"` first")
            throw CancellationError()
        }
        return value
    }

    /// `host=... port=... user=... dbname=...` of the test server, plus `extra`.
    static func conninfo(_ extra: String) throws -> String {
        let url = try TestServer.url()
        let parts = try #require(URLComponents(string: url))
        let host = parts.host ?? "127.0.0.1", port = parts.port ?? 5432, user = parts.user ?? ""
        let database = String(parts.path.dropFirst())
        return "host=\(host) port=\(port) user=\(user) dbname=\(database) \(extra)"
    }

    /// A vault reached over verified TLS works as any other, and its session is encrypted.
    @Test func aVaultOverVerifiedTLSWorks() throws {
        let ca = try Self.environment("VAULTKIT_TEST_POSTGRES_CA")
        let tag = "vaultkit-tls-" + UUID().uuidString.prefix(8).lowercased()
        let location = try PostgresVaultLocation(Self.conninfo("sslmode=verify-full sslrootcert=\(ca) application_name=\(tag)"),
                                                 vaultName: "tls-" + UUID().uuidString.lowercased())
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        defer { vault.close() }
        try vault.set(SecretBytes("over TLS"), service: "s", account: "a")
        #expect(try vault.secret(service: "s", account: "a") == SecretBytes("over TLS"))

        // The server says the vault's session uses TLS.
        let observer = try TestServer.attacker()
        let encrypted = try observer.query(
            "SELECT CASE WHEN s.ssl THEN 'encrypted' ELSE 'plain' END FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1",
            [.text(tag)]
        ) { rows in (0..<rows.count).map { rows.text($0, 0) } }
        #expect(encrypted == ["encrypted"])

        let reopened = try Vault.open(postgres: location, key: key)
        defer { reopened.close() }
        #expect(try reopened.secret(service: "s", account: "a") == SecretBytes("over TLS"))
    }

    /// A server that cannot be verified is refused before anything is sent: its
    /// certificate from another CA, or for another host name. The error says TLS
    /// (`EPROTO`), not "connection refused", and repeats nothing of libpq's text.
    @Test(arguments: ["wrong CA", "wrong host name"])
    func anUnverifiedServerIsRefused(_ case: String) throws {
        let ca = try Self.environment("VAULTKIT_TEST_POSTGRES_CA")
        let otherCA = try Self.environment("VAULTKIT_TEST_POSTGRES_OTHER_CA")
        let conninfo: String
        if `case` == "wrong CA" {
            conninfo = try Self.conninfo("sslmode=verify-full sslrootcert=\(otherCA)")
        } else {
            // The certificate names 127.0.0.1 only; connect to the same address as "localhost".
            conninfo = try Self.conninfo("sslmode=verify-full sslrootcert=\(ca)")
                .replacingOccurrences(of: "host=127.0.0.1", with: "host=localhost hostaddr=127.0.0.1")
        }
        let location = try PostgresVaultLocation(conninfo, vaultName: "tls-refused")
        do {
            _ = try Vault.create(postgres: location, key: .random())
            Issue.record("\(`case`): the connection was not refused")
        } catch {
            #expect(error.code == .io, "\(`case`): \(error)")
            #expect(error.errno == EPROTO, "\(`case`): \(error)")
            #expect(!"\(error)".contains("certificate") && !"\(error)".contains("SSL"), "\(error)")
        }
        // The same server, verified, is reachable: the refusal was about trust only.
        let verified = try PostgresVaultLocation(Self.conninfo("sslmode=verify-full sslrootcert=\(ca)"), vaultName: "tls-" + UUID().uuidString.lowercased())
        try Vault.create(postgres: verified, key: .random()).close()
    }
}
