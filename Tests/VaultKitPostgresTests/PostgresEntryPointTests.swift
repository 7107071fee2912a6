import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
import VaultKitPostgres

/// The public entry points of `VaultKitPostgres` beyond the conformance checks: the
/// async twins, and unlocking with a host key as on a file.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresEntryPointTests {
    @Test func asyncTwinsCreateOpenAndUseAVault() async throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let created = try await Vault.create(postgres: location, key: key)
        try await created.set(SecretBytes("from a task"), service: "s", account: "a")
        await created.close()
        let reopened = try await Vault.open(postgres: location, key: key)
        #expect(try await reopened.secret(service: "s", account: "a") == SecretBytes("from a task"))
        await reopened.close()

        let protected = try TestServer.location()
        let withPassphrase = try await Vault.create(postgres: protected, passphrase: SecretBytes("correct horse"), kdf: TestServer.cheapKDF)
        await withPassphrase.close()
        await #expect(throws: VaultError.wrongPassphrase) { try await Vault.open(postgres: protected, passphrase: SecretBytes("wrong")) }
        let opened = try await Vault.open(postgres: protected, passphrase: SecretBytes("correct horse"))
        #expect(try await opened.items().isEmpty)
        let host = HostKeyPair.generate()
        try await opened.addHost(host.publicKey, name: "web-2")
        let identity = try await opened.identity()
        await opened.close()
        let byHost = try await Vault.open(postgres: protected, hostKey: host, identity: identity)
        #expect(try await byHost.items().isEmpty)
        await byHost.close()
    }

    /// Another host opens the vault with its own key pair, and no longer once removed.
    @Test func aHostKeyOpensAPostgresVaultUntilRemoved() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        defer { vault.close() }
        try vault.set(SecretBytes("shared"), service: "api.example.com", account: "alice")
        let web2 = HostKeyPair.generate(), web3 = HostKeyPair.generate()
        try vault.addHost(web2.publicKey, name: "web-2")
        try vault.addHost(web3.publicKey, name: "web-3")
        let identity = try vault.identity()

        let onWeb2 = try Vault.open(postgres: location, hostKey: web2, identity: identity)
        #expect(try onWeb2.secret(service: "api.example.com", account: "alice") == SecretBytes("shared"))
        onWeb2.close()
        let onWeb3 = try Vault.open(postgres: location, hostKey: web3, identity: identity)
        try onWeb3.set(SecretBytes("written on web-3"), service: "api.example.com", account: "bob")
        onWeb3.close()

        try vault.removeHost("web-2")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(postgres: location, hostKey: web2, identity: identity) }
        let stillWeb3 = try Vault.open(postgres: location, hostKey: web3, identity: identity)
        defer { stillWeb3.close() }
        #expect(try stillWeb3.secret(service: "api.example.com", account: "bob") == SecretBytes("written on web-3"))
        #expect(try vault.verify() == 2)
        #expect(try vault.identity() == identity)
        // Another vault's identity is not this one's.
        let other = try Vault.create(postgres: try TestServer.location(), key: VaultKey.random())
        defer { other.close() }
        #expect(throws: VaultError.tampered(reason: .vaultIdentityNotPinned)) {
            try Vault.open(postgres: location, hostKey: web3, identity: try other.identity())
        }
    }
}
