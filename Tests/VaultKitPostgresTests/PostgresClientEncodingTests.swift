import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Text (host names) is stored as the characters whose UTF-8 bytes the manifest tag
/// covers, whatever client encoding the connection string, `PGOPTIONS`,
/// `PGCLIENTENCODING` or the role's default would give the session: every session sets
/// `client_encoding` to UTF-8 (docs/FORMAT.md section 13, "Text").
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresClientEncodingTests {
    /// Host names in and out of LATIN1, and items whose service and account are not ASCII.
    static let hosts = ["hôte-ü", "€-host", "日本-host"]
    static let items = [(service: "café ☕", account: "José", secret: "sécret ☕"), (service: "東京", account: "ユーザー", secret: "秘密")]

    /// The same vault, through sessions whose client encoding the connection string sets
    /// to `encoding` (as `PGOPTIONS` would).
    static func location(_ location: PostgresVaultLocation, clientEncoding encoding: String) throws -> PostgresVaultLocation {
        let url = try TestServer.url()
        return try PostgresVaultLocation(url + (url.contains("?") ? "&" : "?") + "options=-cclient_encoding%3D\(encoding)", vaultName: location.vaultName)
    }

    /// Adds the hosts and items through `writer`.
    static func fill(_ writer: Vault) throws {
        for name in hosts { try writer.addHost(HostKeyPair.generate().publicKey, name: name) }
        for item in items { try writer.set(item.secret, service: item.service, account: item.account) }
    }

    /// Checks the vault `reader` opened: every host and item as written, and nothing tampered.
    static func check(_ reader: Vault) throws {
        #expect(try reader.hosts().map(\.name) == hosts.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for item in items { #expect(try reader.string(service: item.service, account: item.account) == item.secret) }
        #expect(try reader.verify() == items.count)
    }

    @Test func theSessionsClientEncodingIsUTF8WhateverTheConnectionStringAsks() throws {
        let location = try Self.location(try TestServer.location(), clientEncoding: "LATIN1")
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 1_000)
        #expect(try storage.connection.query("SHOW client_encoding") { $0.text(0, 0) } == "UTF8")
    }

    /// Written by a client whose session would be LATIN1, read by one in the database's
    /// encoding (UTF-8): without UTF-8 sessions the server would store each byte of a
    /// name's UTF-8 as a LATIN1 character, and the reader would see other names (and a
    /// manifest tag that no longer matches).
    @Test func namesWrittenByALatin1ClientReadBackInUTF8() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        try Self.fill(try Vault.open(postgres: try Self.location(location, clientEncoding: "LATIN1"), key: key))
        try Self.check(try Vault.open(postgres: location, key: key))
        // The server holds the characters themselves, as any other client reads them.
        let stored = try TestServer.attacker().query("SELECT name FROM vaultkit_host_wraps WHERE vault = $1", [.text(location.vaultName)]) { rows in
            Set((0..<rows.count).map { rows.text($0, 0) })
        }
        #expect(stored.subtracting([""]) == Set(Self.hosts))
    }

    /// Written in UTF-8, read by a client whose session would be LATIN1, which cannot
    /// hold `€` or `日本`: the server would refuse to convert them.
    @Test func namesWrittenInUTF8ReadBackByALatin1Client() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        try Self.fill(try Vault.create(postgres: location, key: key))
        try Self.check(try Vault.open(postgres: try Self.location(location, clientEncoding: "LATIN1"), key: key))
    }
}
