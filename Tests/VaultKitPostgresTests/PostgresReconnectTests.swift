import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres
#if canImport(Glibc)
import Glibc
#endif

/// A vault outlives its database session: a server restart, a failover or an
/// administrator's `pg_terminate_backend` ends the session, and the vault connects again
/// at its next call instead of failing until it is reopened.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresReconnectTests {
    /// The vault's own session, ended from another connection as an administrator would.
    static func endSessions(tagged tag: String) throws -> Int {
        let administrator = try TestServer.attacker()
        return try administrator.query(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) AS ended",
            [.text(tag)]
        ) { rows in Int(rows.int64(0, 0)) }
    }

    static func taggedLocation() throws -> (PostgresVaultLocation, String) {
        let tag = "vaultkit-reconnect-" + UUID().uuidString.prefix(8).lowercased()
        let location = try PostgresVaultLocation(TestServer.url() + "?application_name=" + tag, vaultName: "reconnect-" + UUID().uuidString.lowercased())
        return (location, tag)
    }

    @Test func callsAfterTheSessionEndsConnectAgain() throws {
        let (location, tag) = try Self.taggedLocation()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        defer { vault.close() }
        try vault.set(SecretBytes("before"), service: "s", account: "a")
        #expect(try Self.endSessions(tagged: tag) == 1)

        // The call that meets the ended session may fail, as a connection reset; nothing
        // after it does, reads and writes alike.
        do {
            _ = try vault.secret(service: "s", account: "a")
        } catch {
            #expect(error.code == .io && error.errno == ECONNRESET, "\(error)")
        }
        #expect(try vault.secret(service: "s", account: "a") == SecretBytes("before"))
        try vault.set(SecretBytes("after"), service: "s", account: "a")
        #expect(try vault.verify() == 1)

        // A write whose session ends before it starts is made on the new session.
        #expect(try Self.endSessions(tagged: tag) == 1)
        do {
            try vault.set(SecretBytes("maybe"), service: "s", account: "b")
        } catch {
            #expect(error.code == .io && error.errno == ECONNRESET, "\(error)")
        }
        try vault.set(SecretBytes("written"), service: "s", account: "b")

        let elsewhere = try Vault.open(postgres: location, key: key)
        defer { elsewhere.close() }
        #expect(try elsewhere.secret(service: "s", account: "a") == SecretBytes("after"))
        #expect(try elsewhere.secret(service: "s", account: "b") == SecretBytes("written"))
        #expect(try elsewhere.verify() == 2)
    }

    /// A session ended again and again: each call fails cleanly or connects again, and
    /// the handle keeps working.
    @Test func sessionsEndedAgainAndAgainNeverWedgeTheHandle() throws {
        let (location, tag) = try Self.taggedLocation()
        let vault = try Vault.create(postgres: location, key: .random())
        defer { vault.close() }
        try vault.set(SecretBytes("kept"), service: "s", account: "a")
        for _ in 0..<3 {
            #expect(try Self.endSessions(tagged: tag) == 1)
            _ = try? vault.contains(service: "s", account: "a")
            #expect(try vault.contains(service: "s", account: "a"))
        }
        #expect(try vault.secret(service: "s", account: "a") == SecretBytes("kept"))
    }
}
