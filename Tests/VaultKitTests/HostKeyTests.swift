import Foundation
import Testing
import TestSupport
@testable import VaultKit

/// Host key wraps (docs/FORMAT.md section 12): one vault unlocked on many hosts, each
/// with its own X25519 key pair, none sharing the passphrase.
@Suite struct HostKeyTests {
    /// Writes a new host key pair's private key to a 0600 file beside the vault.
    static func hostKeyFile(_ host: HostKeyPair, besides vaultPath: String, name: String) throws -> String {
        let path = vaultPath + "." + name + ".hostkey"
        try host.writePrivateKey(toNewFile: path)
        return path
    }

    @Test func aHostAddedByAnotherOpensWithItsOwnPrivateKeyFile() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("s3cr3t", service: "api.example.com", account: "alice")
        let hostB = HostKeyPair.generate()
        try vault.addHost(HostPublicKey(base64: hostB.publicKey.base64), name: "web-2")
        let keyFile = try Self.hostKeyFile(hostB, besides: path, name: "b")
        #expect(Fixtures.mode(of: keyFile) == 0o600)

        let onB = try Vault.open(at: path, hostKey: HostKeyPair(privateKeyFile: keyFile))
        #expect(try onB.string(service: "api.example.com", account: "alice") == "s3cr3t")
        try onB.set("from B", service: "db.example.com", account: "svc")
        #expect(try vault.string(service: "db.example.com", account: "svc") == "from B")
        // A host can add a host: any unlock method holds the master key.
        let hostC = HostKeyPair.generate()
        try onB.addHost(hostC.publicKey, name: "web-3")
        #expect(try vault.hosts().map(\.name) == ["web-2", "web-3"])
        #expect(try vault.hosts().map(\.fingerprint) == [hostB.publicKey.fingerprint, hostC.publicKey.fingerprint])
        #expect(try Vault.open(at: path, hostKey: hostC).verify() == 2)
        #expect(try vault.verify() == 2)
    }

    @Test func aHostKeyThatWasNeverAddedIsAWrongKey() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: .generate()) }
        try vault.addHost(HostKeyPair.generate().publicKey, name: "a")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: .generate()) }
    }

    @Test func removingAHostReKeysSoItsWrapOpensNothing() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "b")
        let hostB = HostKeyPair.generate(), hostC = HostKeyPair.generate()
        try vault.addHost(hostB.publicKey, name: "b")
        try vault.addHost(hostC.publicKey, name: "c")
        let onB = try Vault.open(at: path, hostKey: hostB)
        let checkBefore = RawDatabase(path).rows("SELECT master_key_check FROM vault_header")
        let oldWrapB = RawDatabase(path).rows("SELECT public_key, sealed_master_key FROM vault_host_wraps WHERE name = 'b'")[0]

        try vault.removeHost("b")
        #expect(RawDatabase(path).rows("SELECT master_key_check FROM vault_header") != checkBefore)
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: hostB) }
        // The handle B had open cannot follow the re-key: it has no wrap any more.
        #expect(throws: VaultError.keyChanged) { try onB.set("x", service: "s", account: "c") }
        // Everyone else still opens, items intact: the passphrase, and host C.
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(try reopened.string(service: "s", account: "a") == "one")
        #expect(try reopened.hosts().map(\.name) == ["c"])
        #expect(try Vault.open(at: path, hostKey: hostC).string(service: "s", account: "b") == "two")

        #expect(throws: VaultError.invalidArgument(.noSuchHost)) { try vault.removeHost("nobody") }

        // B's old wrap put back by someone who kept it holds the old master key: refused.
        RawDatabase(path).execute("INSERT INTO vault_host_wraps VALUES ('b', X'\(oldWrapB[0])', X'\(oldWrapB[1])')")
        #expect(throws: VaultError.tampered(reason: .hostWrapHoldsAnotherMasterKey)) {
            try Vault.open(at: path, hostKey: hostB)
        }
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try Vault.open(at: path, passphrase: "correct horse").verify()
        }
    }

    @Test func aVaultOpenedWithAHostKeyCannotReKeyButFollowsAReKey() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        let hostB = HostKeyPair.generate()
        try vault.addHost(hostB.publicKey, name: "b")
        let onB = try Vault.open(at: path, hostKey: hostB)
        #expect(throws: VaultError.invalidArgument(.rekeyNeedsPassphraseOrKey)) {
            try onB.removeHost("b")
        }
        try vault.rekey()
        // The re-key rewrote B's wrap too: its open handle follows through it.
        #expect(try onB.string(service: "s", account: "a") == "one")
        try onB.set("two", service: "s", account: "b")
        #expect(try vault.string(service: "s", account: "b") == "two")
        // And a passphrase change from a host-opened vault rewraps with the new one.
        try onB.changePassphrase(to: "new horse", kdf: testKDF)
        #expect(try Vault.open(at: path, passphrase: "new horse").verify() == 2)
    }

    @Test func hostWrapsChangedBehindTheEnginesBackAreDetected() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "b")
        let failed = VaultError.tampered(reason: .headerFailedAuthentication)
        let raw = RawDatabase(path)
        // Hex, as RawDatabase reads every column.
        let backup = raw.rows("SELECT public_key, sealed_master_key FROM vault_host_wraps WHERE name = 'b'")[0]
        let restore = {
            raw.execute("DELETE FROM vault_host_wraps; INSERT INTO vault_host_wraps VALUES ('b', X'\(backup[0])', X'\(backup[1])')")
        }
        let reopen = { try Vault.open(at: path, passphrase: "correct horse") }

        // An attacker's own host, sealed to a key of their choosing (they cannot know the
        // master key, so they seal a guess): added.
        let attacker = HostKeyPair.generate()
        let guess = HostWraps.seal(KeyHierarchy.randomMasterKey(), to: attacker.publicKey)
        raw.execute("INSERT INTO vault_host_wraps VALUES ('evil', X'\(hex(attacker.publicKey.bytes))', X'\(hex(guess))')")
        #expect(throws: failed) { try reopen().hosts() }
        #expect(throws: failed) { try reopen().string(service: "s", account: "a") }
        #expect(throws: failed) { try vault.set("x", service: "s", account: "x") }
        restore()
        #expect(try reopen().hosts().map(\.name) == ["b"])
        // Renamed.
        raw.execute("UPDATE vault_host_wraps SET name = 'c'")
        #expect(throws: failed) { try reopen().verify() }
        restore()
        // Removed.
        raw.execute("DELETE FROM vault_host_wraps")
        #expect(throws: failed) { try reopen().verify() }
        // The whole table dropped: the tag covered its existence.
        raw.execute("DROP TABLE vault_host_wraps")
        #expect(throws: failed) { try reopen().verify() }
        raw.execute(DatabaseSchema.hostWrapsTable)
        restore()
        #expect(try reopen().verify() == 1)
    }

    @Test func aHostWrapsTableAddedToAVaultWithoutHostsIsDetected() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        RawDatabase(path).execute(DatabaseSchema.hostWrapsTable)
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try Vault.open(at: path, passphrase: "correct horse").verify()
        }
    }

    @Test func namesAndKeysAreCheckedBeforeAnythingIsWritten() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "b")
        #expect(throws: VaultError.invalidArgument(.hostNameTaken)) { try vault.addHost(HostKeyPair.generate().publicKey, name: "b") }
        #expect(throws: VaultError.invalidArgument(.hostKeyAlreadyAdded)) { try vault.addHost(host.publicKey, name: "c") }
        #expect(throws: VaultError.invalidArgument(.hostNameLength)) { try vault.addHost(host.publicKey, name: "") }
        #expect(throws: VaultError.invalidArgument(.hostNameControlCharacters)) { try vault.addHost(host.publicKey, name: "a\nb") }
        #expect(throws: VaultError.invalidArgument(.hostPublicKeyNotBase64)) { try HostPublicKey(base64: "AAAA") }
        #expect(try vault.hosts().map(\.name) == ["b"])
    }

    @Test func privateKeyFilesMustBeTheUsersAloneAndExactly32Bytes() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = directory + "/host.key"
        let host = HostKeyPair.generate()
        try host.writePrivateKey(toNewFile: path)
        #expect(Fixtures.mode(of: path) == 0o600)
        #expect(try HostKeyPair(privateKeyFile: path).publicKey == host.publicKey)
        #expect(throws: VaultError.vaultAlreadyExists(path: path)) { try host.writePrivateKey(toNewFile: path) }
        chmod(path, 0o640)
        #expect(throws: VaultError.insecurePermissions(path: path, mode: UInt32(S_IFREG | 0o640))) { try HostKeyPair(privateKeyFile: path) }
        let short = directory + "/short.key"
        Fixtures.write([1, 2, 3], to: short)
        #expect(throws: VaultError.invalidArgument(.hostPrivateKeyFileLength)) { try HostKeyPair(privateKeyFile: short) }
        let link = directory + "/link.key"
        symlink(path, link)
        #expect(throws: VaultError.symbolicLink(path: link)) { try HostKeyPair(privateKeyFile: link) }
        // Never printed.
        #expect(!String(describing: host).contains(host.privateKey.withUnsafeBytes { Data($0).base64EncodedString() }))
    }

    @Test func hostWrapsWorkThroughTheStorageSeam() throws {
        let storage = InMemoryStorage()
        let key = VaultKey.random()
        let vault = try Vault.create(in: storage, key: key)
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate(), other = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "b")
        try vault.addHost(other.publicKey, name: "c")
        #expect(try Vault.open(storage, hostKey: host).string(service: "s", account: "a") == "one")
        try vault.removeHost("c")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(storage, hostKey: other) }
        #expect(try Vault.open(storage, hostKey: host).string(service: "s", account: "a") == "one")
        storage.tamper { $0.hostWraps?.append(StoredHostWrap(name: "evil", publicKey: other.publicKey.bytes, sealedMasterKey: HostWraps.seal(KeyHierarchy.randomMasterKey(), to: other.publicKey))) }
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try Vault.open(storage, key: key).verify()
        }
    }

    @Test func asyncTwinsAddListOpenAndRemove() async throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try await vault.addHost(host.publicKey, name: "b")
        #expect(try await vault.hosts().map(\.publicKey) == [host.publicKey])
        let onB = try await Vault.open(at: path, hostKey: host)
        #expect(try await onB.verify() == 0)
        try await vault.removeHost("b")
        #expect(try await vault.hosts().isEmpty)
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The `CREATE` text of the host wraps table, as docs/FORMAT.md gives it.
enum DatabaseSchema {
    static let hostWrapsTable = """
        CREATE TABLE vault_host_wraps (
            name TEXT PRIMARY KEY NOT NULL,
            public_key BLOB NOT NULL,
            sealed_master_key BLOB NOT NULL
        ) STRICT, WITHOUT ROWID
        """
}

extension FormatTests {
    @Test(.enabled(if: readerIsAvailable, "needs python3 with PyNaCl (scripts/test.sh installs it)"))
    func anIndependentReaderDecryptsAVaultThroughAHostKeyWrap() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web-2")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web-3")
        try vault.rekey()
        vault.close()
        let keyFile = try HostKeyTests.hostKeyFile(host, besides: path, name: "b")
        let result = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", keyFile])
        #expect(result.status == 0, "\(result.stderr)")
        let items = try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(ReadItem.self, from: Data($0.utf8)) }
        #expect(items.map(\.secret) == [Self.hex(Data("one".utf8))])
        // The passphrase reads it too, the host wraps being part of the authenticated header.
        let byPassphrase = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path],
                                                environment: ChildProcess.cleanEnvironment(["VAULT_PASSPHRASE": "correct horse"]))
        #expect(byPassphrase.status == 0, "\(byPassphrase.stderr)")

        RawDatabase(path).execute("DELETE FROM vault_host_wraps WHERE name = 'web-3'")
        let tampered = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", keyFile])
        #expect(tampered.status == 1)
        #expect(tampered.stderr.contains("failed authentication"))
        let stranger = try HostKeyTests.hostKeyFile(.generate(), besides: path, name: "stranger")
        let refused = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", stranger])
        #expect(refused.stderr.contains("wrong passphrase or key"))
    }
}
