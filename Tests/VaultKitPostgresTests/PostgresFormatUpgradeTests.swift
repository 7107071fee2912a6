import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit
@testable import VaultKitPostgres

/// A PostgreSQL vault of format 3 (before item history) is verified, then upgraded, as a
/// file is (FORMAT.md sections 13 and 14); a format-4 vault relabelled 3 is refused.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresFormatUpgradeTests {
    /// A genuine format-3 vault: five items of record version 1 (no writer, no number),
    /// the header at format 3 and the manifest tagged under it, as that release wrote it.
    static func formatThreeVault() throws -> (PostgresVaultLocation, VaultKey) {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.withUnlocked { (unlocked) throws(VaultError) in
            let keys = unlocked.keys
            try unlocked.store.writeTransaction { () throws(VaultError) in
                for n in 0..<5 {
                    let (service, account, secret) = ("svc\(n % 2)", "acct\(n)", "secret \(n)")
                    func lp(_ text: String) -> [UInt8] { withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian, Array.init) + Array(text.utf8) }
                    let now = withUnsafeBytes(of: Int64(1_700_000_000_000).littleEndian, Array.init)
                    let record: [UInt8] = [0x01] + lp(service) + lp(account) + [0] + now + now + lp(secret)
                    var nonce = SecretBox.Nonce()
                    let sealed = nonce.withUnsafeMutableBytes { nonce in
                        SecretBox.seal(plaintextCount: record.count, key: keys.sealingKey, nonce: nonce) { $0.copyBytes(from: record) }
                    }
                    try nonce.withUnsafeBytes { (nonce) throws(VaultError) in
                        try unlocked.store.upsert(lookupID: keys.lookupID(service: service, account: account),
                                                  serviceTag: keys.serviceTag(service: service), nonce: nonce, sealed: sealed)
                    }
                }
                var header = try unlocked.store.readHeader()
                header.formatVersion = 3
                try unlocked.store.setFormatVersion(3)
                try UnlockedVault.rebuildManifest(store: unlocked.store, keys: keys, header: header, generation: try unlocked.store.readGeneration() + 1)
            }
        }
        vault.close()
        #expect(try formatVersion(location) == 3)
        return (location, key)
    }

    static func formatVersion(_ location: PostgresVaultLocation) throws -> Int64 {
        try TestServer.attacker().query("SELECT format_version FROM vaultkit_header WHERE vault = $1", [.text(location.vaultName)]) { $0.int64(0, 0) }
    }

    @Test func aFormatThreeVaultIsVerifiedThenUpgradedWhenOpened() throws {
        let (location, key) = try Self.formatThreeVault()
        let vault = try Vault.open(postgres: location, key: key)
        #expect(try Self.formatVersion(location) == 4)
        #expect(try vault.verify() == 5)
        #expect(try vault.string(service: "svc1", account: "acct3") == "secret 3")
        try vault.set("secret 3b", service: "svc1", account: "acct3")
        #expect(try vault.history(service: "svc1", account: "acct3").map(\.number) == [2, 1])
        #expect(try Vault.open(postgres: location, key: key).verify() == 5)
    }

    /// A row deleted from a format-3 vault is not laundered by the upgrade.
    @Test func aTamperedFormatThreeVaultIsNotUpgraded() throws {
        let (location, key) = try Self.formatThreeVault()
        _ = try TestServer.attacker().change(
            "DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = (SELECT lookup_id FROM vaultkit_items WHERE vault = $1 ORDER BY lookup_id LIMIT 1)",
            [.text(location.vaultName)])
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try Vault.open(postgres: location, key: key) }
        #expect(try Self.formatVersion(location) == 3)
    }

    /// The tag covers the format version: a format-4 vault relabelled 3 is named downgraded.
    @Test func aFormatFourVaultRelabelledAsFormatThreeIsRefused() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "a")
        vault.close()
        _ = try TestServer.attacker().change("UPDATE vaultkit_header SET format_version = 3 WHERE vault = $1", [.text(location.vaultName)])
        #expect(throws: VaultError.tampered(reason: .formatDowngraded)) { try Vault.open(postgres: location, key: key) }
        #expect(try Self.formatVersion(location) == 3)
    }
}
