import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// Format versions and the header: a newer file cannot be passed off as an older one
/// (whose manifest is weaker or absent), no header field can be changed without the
/// key, the schema must be VaultKit's own, and a row stored twice does not cancel out.
@Suite(.offCooperativePool) struct FormatVersionTests {
    static let downgraded = VaultError.tampered(reason: .formatDowngraded)
    static let schemaChanged = VaultError.tampered(reason: .schemaChanged)
    static let headerChanged = VaultError.tampered(reason: .headerFailedAuthentication)

    /// Vaults written by earlier versions of VaultKit, with the fuzzer's fixed key
    /// (bytes 1 to 32): format 1 (`seed-2.vault`), format 2 (`seed-v2-2.vault`) and
    /// five
    /// items each, "secret N" under ("svc<N % 2>", "acct<N>").
    static let seedKey = try! VaultKey(Data((1...32).map { UInt8($0) }))

    static func copySeed(_ name: String, _ label: String = #function) throws -> String {
        let source = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/FuzzVaultFile/\(name)").path
        let path = Fixtures.vaultPath(label)
        Fixtures.write(Fixtures.bytes(of: source), to: path)
        try #require(FileManager.default.fileExists(atPath: path))
        return path
    }

    /// The attack: delete a row (a revoked token), then make the file a perfect format-1
    /// vault, hoping for an automatic "upgrade" that rebuilds a manifest over whatever rows
    /// are there, after which `verify()` would say ok.
    @Test func aFormatThreeVaultRelabelledAsFormatOneIsRefused() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("keep", service: "api", account: "alice")
        try vault.set("revoked", service: "api", account: "bob")
        let bobRow = RawDatabase(path).rows("SELECT lookup_id FROM vault_items")
        vault.close()
        #expect(bobRow.count == 2)

        let raw = RawDatabase(path)
        raw.execute("""
            DELETE FROM vault_items WHERE lookup_id = x'\(bobRow[1][0])';
            DROP TABLE vault_manifest;
            DROP TABLE vault_generation;
            ALTER TABLE vault_header DROP COLUMN manifest_root;
            ALTER TABLE vault_header DROP COLUMN manifest_tag;
            UPDATE vault_header SET format_version = 1;
            PRAGMA user_version = 1;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_schema SET sql = '\(VaultDatabase.formatOneHeaderTable)' WHERE name = 'vault_header';
            PRAGMA writable_schema = OFF;
            """)

        // A plain open never upgrades format 1 ...
        #expect(throws: VaultError.formatUpgradeRequired(version: 1)) { try Vault.open(at: path, key: key) }
        // ... and even an explicit upgrade sees that the key was wrapped for format 3.
        #expect(throws: Self.downgraded) { try Vault.upgrade(at: path, key: key) }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 1)
    }

    @Test func aFormatThreeVaultRelabelledAsFormatTwoIsRefused() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("s", service: "api", account: "alice")
        vault.close()
        RawDatabase(path).execute("UPDATE vault_header SET format_version = 2; PRAGMA user_version = 2; DROP TABLE vault_generation;")
        #expect(throws: Self.downgraded) { try Vault.open(at: path, passphrase: "correct horse") }
        // The wrong passphrase is still just that.
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, passphrase: "wrong") }
    }

    /// Every header field is covered by the manifest tag: edited without the key, the
    /// vault is tampered at the first read, listing, write or verify.
    @Test(arguments: [
        "vault_id = randomblob(16)",
        "kdf_opslimit = kdf_opslimit",  // control: an edit that changes nothing is no tampering
        "master_key_nonce = master_key_nonce",
    ])
    func headerFieldsAreAuthenticated(edit: String) throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("s", service: "api", account: "alice")
        vault.close()
        RawDatabase(path).execute("UPDATE vault_header SET \(edit)")
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        if edit.hasPrefix("vault_id") {
            #expect(throws: Self.headerChanged) { try reopened.string(service: "api", account: "alice") }
            #expect(throws: Self.headerChanged) { try reopened.items() }
            #expect(throws: Self.headerChanged) { try reopened.set("x", service: "api", account: "bob") }
            #expect(throws: Self.headerChanged) { try reopened.verify() }
        } else {
            #expect(try reopened.string(service: "api", account: "alice") == "s")
            #expect(try reopened.verify() == 1)
        }
    }

    /// The KDF settings are authenticated too: put back the previous passphrase's header
    /// fields (an old salt and wrapping), and the root's tag no longer matches them.
    @Test func anOlderKeyWrappingPutBackIsDetected() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("s", service: "api", account: "alice")
        let old = RawDatabase(path).rows("SELECT kdf_salt, master_key_nonce, wrapped_master_key FROM vault_header")[0]
        try vault.changePassphrase(to: "new passphrase", kdf: testKDF)
        vault.close()
        RawDatabase(path).execute("""
            UPDATE vault_header SET kdf_salt = x'\(old[0])', master_key_nonce = x'\(old[1])', wrapped_master_key = x'\(old[2])'
            """)
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(throws: Self.headerChanged) { try reopened.verify() }
    }

    /// The review's second attack: rebuild `vault_items` without its primary key and
    /// store an old row twice, which cancelled out under format 2's XOR.
    @Test func aTableRebuiltWithoutItsPrimaryKeyIsRefused() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("old", service: "api", account: "alice")
        let oldRow = RawDatabase(path).rows("SELECT lookup_id, service_tag, nonce, sealed FROM vault_items")[0]
        try vault.set("new", service: "api", account: "alice")
        vault.close()
        RawDatabase(path).execute("""
            CREATE TABLE copy AS SELECT * FROM vault_items;
            DROP TABLE vault_items;
            CREATE TABLE vault_items (lookup_id BLOB NOT NULL, service_tag BLOB NOT NULL, nonce BLOB NOT NULL, sealed BLOB NOT NULL) STRICT;
            CREATE INDEX vault_items_by_service ON vault_items (service_tag);
            INSERT INTO vault_items SELECT * FROM copy;
            DROP TABLE copy;
            INSERT INTO vault_items VALUES (x'\(oldRow[0])', x'\(oldRow[1])', x'\(oldRow[2])', x'\(oldRow[3])');
            INSERT INTO vault_items VALUES (x'\(oldRow[0])', x'\(oldRow[1])', x'\(oldRow[2])', x'\(oldRow[3])');
            """)
        #expect(throws: Self.schemaChanged) { try Vault.open(at: path, key: key) }
    }

    @Test(arguments: [
        "CREATE TRIGGER t AFTER INSERT ON vault_items BEGIN DELETE FROM vault_manifest; END",
        "CREATE VIEW v AS SELECT * FROM vault_items",
        "CREATE INDEX extra ON vault_items (nonce)",
        "CREATE TABLE extra (x INTEGER)",
        "DROP INDEX vault_items_by_service",
    ])
    func anyOtherSchemaChangeIsRefused(change: String) throws {
        let (vault, path, key) = try Fixtures.keyVault()
        vault.close()
        RawDatabase(path).execute(change)
        #expect(throws: Self.schemaChanged) { try Vault.open(at: path, key: key) }
    }

    /// The sum that replaced XOR counts: a term added twice is neither zero nor the
    /// term, and removing undoes adding, across carries between the 64-bit words.
    @Test func manifestDigestsCountRows() throws {
        let keys = KeyHierarchy(masterKey: KeyHierarchy.randomMasterKey())
        var digests: [ManifestDigest] = []
        for index in 0..<64 {
            let bytes = [UInt8](repeating: UInt8(index), count: 32)
            digests.append(bytes.withUnsafeBytes { keys.manifestItemTerm(lookupID: $0, serviceTag: $0, nonce: UnsafeRawBufferPointer(rebasing: $0[0..<24])) })
        }
        for term in digests {
            #expect(term + term != .zero)
            #expect(term + term != term)
            #expect(term ^ term == .zero)  // what format 2 did
        }
        var sum = ManifestDigest.zero
        for term in digests { sum += term }
        for term in digests.reversed() { sum -= term }
        #expect(sum == .zero)
        // Carries: all-ones plus one is zero; zero minus one is all-ones.
        let ones = try #require([UInt8](repeating: 0xFF, count: 32).withUnsafeBytes { ManifestDigest(bytes: $0) })
        let one = try #require(([1] + [UInt8](repeating: 0, count: 31)).withUnsafeBytes { ManifestDigest(bytes: $0) })
        #expect(ones + one == .zero)
        #expect(ManifestDigest.zero - one == ones)
        #expect(-one == ones)
    }

    // MARK: Older formats

    @Test func aFormatOneVaultOpensOnlyThroughAnExplicitUpgrade() throws {
        let path = try Self.copySeed("seed-2.vault")
        #expect(throws: VaultError.formatUpgradeRequired(version: 1)) { try Vault.open(at: path, key: Self.seedKey) }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 1)

        let upgraded = try Vault.upgrade(at: path, key: Self.seedKey)
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 4)
        #expect(RawDatabase(path).integer("PRAGMA user_version") == 4)
        #expect(try upgraded.verify() == 5)
        #expect(try upgraded.string(service: "svc1", account: "acct3") == "secret 3")
        upgraded.close()

        // Protected from then on, and opened like any vault.
        let reopened = try Vault.open(at: path, key: Self.seedKey)
        let target = RawDatabase(path).rows("SELECT lookup_id FROM vault_items")[0][0]
        RawDatabase(path).execute("DELETE FROM vault_items WHERE lookup_id = x'\(target)'")
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try reopened.verify() }
    }

    @Test func aFormatTwoVaultIsVerifiedThenUpgradedWhenOpened() throws {
        let path = try Self.copySeed("seed-v2-2.vault")
        let vault = try Vault.open(at: path, key: Self.seedKey)
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 4)
        #expect(try vault.verify() == 5)
        #expect(try vault.string(service: "svc0", account: "acct4") == "secret 4")
        if FormatTests.readerIsAvailable {
            let keyFile = Fixtures.writeKeyFile(Self.seedKey, besides: path)
            let result = try ChildProcess.run("/usr/bin/env", ["python3", FormatTests.reader, path, "--key-file", keyFile],
                                              environment: ChildProcess.cleanEnvironment([:]))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == 5)
        }
    }

    /// A tampered format-2 vault is not laundered by the upgrade: its old manifest is
    /// checked first, and nothing is rewritten.
    @Test func aTamperedFormatTwoVaultIsNotUpgraded() throws {
        let path = try Self.copySeed("seed-v2-2.vault")
        let target = RawDatabase(path).rows("SELECT lookup_id FROM vault_items")[0][0]
        RawDatabase(path).execute("DELETE FROM vault_items WHERE lookup_id = x'\(target)'")
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try Vault.open(at: path, key: Self.seedKey)
        }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 2)
    }

    /// A format-3 vault as VaultKit before history wrote it: five items "secret N" under
    /// ("svc<N % 2>", "acct<N>") in records of version 1 (FORMAT.md section 5), the
    /// manifest tagged over a header saying 3. (`seed-v3-2.vault` predates format 3's
    /// generation table, so it is no such vault.)
    static func formatThreeVault(_ label: String = #function) throws -> (String, VaultKey) {
        let (vault, path, key) = try Fixtures.keyVault(label)
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
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 3)
        return (path, key)
    }

    /// A format-3 vault (records of version 1, no history) is verified whole, then
    /// relabelled format 4 in place; its items gain history from their next write.
    @Test func aFormatThreeVaultIsVerifiedThenUpgradedWhenOpened() throws {
        let (path, seedKey) = try Self.formatThreeVault()
        let generation = RawDatabase(path).integer("SELECT generation FROM vault_generation")
        let vault = try Vault.open(at: path, key: seedKey)
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 4)
        #expect(RawDatabase(path).integer("SELECT generation FROM vault_generation") == generation.map { $0 + 1 })
        #expect(try vault.verify() == 5)
        let before = try vault.history(service: "svc1", account: "acct3")
        #expect(before.map(\.number) == [1] && before[0].writer == "" && before[0].operation == .set)
        try vault.set("secret 3b", service: "svc1", account: "acct3")
        #expect(try vault.history(service: "svc1", account: "acct3").map(\.number) == [2, 1])
        #expect(try vault.itemWithSecret(service: "svc1", account: "acct3", version: 1).secret.string() == "secret 3")
        vault.close()
        if FormatTests.readerIsAvailable {
            let keyFile = Fixtures.writeKeyFile(seedKey, besides: path)
            let result = try ChildProcess.run("/usr/bin/env", ["python3", FormatTests.reader, path, "--key-file", keyFile, "--history"],
                                              environment: ChildProcess.cleanEnvironment([:]))
            #expect(result.status == 0, "\(result.stderr)")
            // Five items, then the one kept version.
            #expect(result.stdout.split(separator: "\n").count == 6)
            #expect(result.stdout.split(separator: "\n").last?.contains("\"version\": 1") == true)
        }
    }

    /// A format-3 vault that can only be read (a backup on read-only media) opens and
    /// reads as it is: no upgrade is attempted, and nothing fails for it.
    @Test(.enabled(if: Mounts.isAvailable, "needs root and mount(8)"))
    func aReadOnlyFormatThreeVaultIsReadWithoutAnUpgrade() throws {
        let (path, key) = try Self.formatThreeVault()
        let directory = (path as NSString).deletingLastPathComponent
        try Mounts.withReadOnlyView(of: directory) { view in
            let vault = try Vault.open(at: view + "/" + (path as NSString).lastPathComponent, key: key)
            #expect(try vault.string(service: "svc1", account: "acct3") == "secret 3")
            #expect(try vault.verify() == 5)
            #expect(try vault.history(service: "svc0", account: "acct2").map(\.number) == [1])
            vault.close()
        }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 3)
    }

    /// A tampered format-3 vault is not laundered by the upgrade.
    @Test func aTamperedFormatThreeVaultIsNotUpgraded() throws {
        let (path, seedKey) = try Self.formatThreeVault()
        let target = RawDatabase(path).rows("SELECT lookup_id FROM vault_items")[0][0]
        RawDatabase(path).execute("DELETE FROM vault_items WHERE lookup_id = x'\(target)'")
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try Vault.open(at: path, key: seedKey) }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 3)
    }

    /// A format-4 vault relabelled 3 (the same tables) would be "upgraded" again; the tag
    /// covers the format version, so the edit is found and named.
    @Test func aFormatFourVaultRelabelledAsFormatThreeIsRefused() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "a")
        vault.close()
        RawDatabase(path).execute("UPDATE vault_header SET format_version = 3; PRAGMA user_version = 3;")
        #expect(throws: Self.downgraded) { try Vault.open(at: path, key: key) }
        #expect(RawDatabase(path).integer("SELECT format_version FROM vault_header") == 3)
    }

    /// A VaultKit that reads format 3 at most refuses format 4 by its number, not as damage.
    @Test func aNewerFormatIsRefusedByItsNumber() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        vault.close()
        RawDatabase(path).execute("UPDATE vault_header SET format_version = 5;")
        #expect(throws: VaultError.unsupportedFormatVersion(5)) { try Vault.open(at: path, key: key) }
    }
}
