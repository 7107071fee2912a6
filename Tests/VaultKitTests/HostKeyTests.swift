import Foundation
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// Host key wraps (docs/FORMAT.md section 12): one vault unlocked on many hosts, each
/// with its own X25519 key pair, none sharing the passphrase.
@Suite(.offCooperativePool) struct HostKeyTests {
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

        let identity = try vault.identity()
        let onB = try Vault.open(at: path, hostKey: HostKeyPair(privateKeyFile: keyFile), identity: identity)
        #expect(try onB.string(service: "api.example.com", account: "alice") == "s3cr3t")
        try onB.set("from B", service: "db.example.com", account: "svc")
        #expect(try vault.string(service: "db.example.com", account: "svc") == "from B")
        // A host cannot add a host: it holds the master key, but not the identity that signs the wraps.
        let hostC = HostKeyPair.generate()
        #expect(throws: VaultError.invalidArgument(.hostChangeNeedsPassphraseOrKey)) { try onB.addHost(hostC.publicKey, name: "web-3") }
        #expect(try onB.identity() == identity)
        try vault.addHost(hostC.publicKey, name: "web-3")
        #expect(try vault.hosts().map(\.name) == ["web-2", "web-3"])
        #expect(try onB.hosts().map(\.fingerprint) == [hostB.publicKey.fingerprint, hostC.publicKey.fingerprint])
        #expect(try Vault.open(at: path, hostKey: hostC, identity: identity).verify() == 2)
        #expect(try vault.verify() == 2)
    }

    @Test func aHostKeyThatWasNeverAddedIsAWrongKey() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let identity = try vault.identity()
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: .generate(), identity: identity) }
        try vault.addHost(HostKeyPair.generate().publicKey, name: "a")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: .generate(), identity: identity) }
    }

    @Test func removingAHostReKeysSoItsWrapOpensNothing() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "b")
        let hostB = HostKeyPair.generate(), hostC = HostKeyPair.generate()
        try vault.addHost(hostB.publicKey, name: "b")
        try vault.addHost(hostC.publicKey, name: "c")
        let identity = try vault.identity()
        let onB = try Vault.open(at: path, hostKey: hostB, identity: identity)
        let checkBefore = RawDatabase(path).rows("SELECT master_key_check FROM vault_header")
        let oldWrapB = RawDatabase(path).rows("SELECT public_key, sealed_master_key FROM vault_host_wraps WHERE name = 'b'")[0]

        try vault.removeHost("b")
        #expect(RawDatabase(path).rows("SELECT master_key_check FROM vault_header") != checkBefore)
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(at: path, hostKey: hostB, identity: identity) }
        // The handle B had open cannot follow the re-key: it has no wrap any more.
        #expect(throws: VaultError.keyChanged) { try onB.set("x", service: "s", account: "c") }
        // Everyone else still opens, items intact: the passphrase, and host C.
        let reopened = try Vault.open(at: path, passphrase: "correct horse")
        #expect(try reopened.string(service: "s", account: "a") == "one")
        #expect(try reopened.hosts().map(\.name) == ["c"])
        #expect(try Vault.open(at: path, hostKey: hostC, identity: identity).string(service: "s", account: "b") == "two")
        #expect(try reopened.identity() == identity)

        #expect(throws: VaultError.invalidArgument(.noSuchHost)) { try vault.removeHost("nobody") }

        // B's old wrap put back by someone who kept it is not among the signed wraps: refused.
        RawDatabase(path).execute("INSERT INTO vault_host_wraps VALUES ('b', X'\(oldWrapB[0])', X'\(oldWrapB[1])')")
        #expect(throws: VaultError.tampered(reason: .hostWrapsSignatureInvalid)) {
            try Vault.open(at: path, hostKey: hostB, identity: identity)
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
        let onB = try Vault.open(at: path, hostKey: hostB, identity: try vault.identity())
        #expect(throws: VaultError.invalidArgument(.rekeyNeedsPassphraseOrKey)) {
            try onB.removeHost("b")
        }
        try vault.rekey()
        // The re-key rewrote B's wrap too: its open handle follows through it.
        #expect(try onB.string(service: "s", account: "a") == "one")
        try onB.set("two", service: "s", account: "b")
        #expect(try vault.string(service: "s", account: "b") == "two")
        // Nor can it change the passphrase: the identity, sealed under the old one, would be lost.
        #expect(throws: VaultError.invalidArgument(.hostChangeNeedsPassphraseOrKey)) {
            try onB.changePassphrase(to: "new horse", kdf: testKDF)
        }
        #expect(try Vault.open(at: path, passphrase: "correct horse").verify() == 2)
    }

    @Test func hostWrapsChangedBehindTheEnginesBackAreDetected() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        try vault.set("one", service: "s", account: "a")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "b")
        let failed = VaultError.tampered(reason: .headerFailedAuthentication)
        let raw = RawDatabase(path)
        // Hex, as RawDatabase reads every column; the identity's row ('') too.
        let backup = raw.rows("SELECT name, public_key, sealed_master_key FROM vault_host_wraps")
        #expect(backup.map { $0[0] } == ["", "62"])
        let restore = {
            raw.execute("DELETE FROM vault_host_wraps")
            for row in backup { raw.execute("INSERT INTO vault_host_wraps VALUES (CAST(X'\(row[0])' AS TEXT), X'\(row[1])', X'\(row[2])')") }
        }
        let reopen = { try Vault.open(at: path, passphrase: "correct horse") }

        // An attacker's own host, sealed to a key of their choosing (they cannot know the
        // master key, so they seal a guess): added.
        let attacker = HostKeyPair.generate()
        let guess = try HostWraps.seal(KeyHierarchy.randomMasterKey(), to: attacker.publicKey)
        raw.execute("INSERT INTO vault_host_wraps VALUES ('evil', X'\(hex(attacker.publicKey.bytes))', X'\(hex(guess))')")
        #expect(throws: failed) { try reopen().hosts() }
        #expect(throws: failed) { try reopen().string(service: "s", account: "a") }
        #expect(throws: failed) { try vault.set("x", service: "s", account: "x") }
        restore()
        #expect(try reopen().hosts().map(\.name) == ["b"])
        // Renamed.
        raw.execute("UPDATE vault_host_wraps SET name = 'c' WHERE name = 'b'")
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
        // Low-order points, all zeros among them: anyone opens a master key "sealed" to one.
        let lowOrder: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            [0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
             0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00],
        ]
        for point in lowOrder {
            #expect(throws: VaultError.invalidArgument(.hostPublicKeyLowOrder)) { try HostPublicKey(bytes: point) }
        }
        #expect(throws: VaultError.invalidArgument(.hostPublicKeyLowOrder)) {
            try HostPublicKey(base64: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        }
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
        chmod(path, 0o600)
        // A FIFO is refused without waiting for a writer.
        let fifo = directory + "/fifo.key"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: VaultError.invalidArgument(.hostKeyFileNotRegular)) { try HostKeyPair(privateKeyFile: fifo) }
        // Never printed.
        #expect(!String(describing: host).contains(host.privateKey.withUnsafeBytes { Data($0).base64EncodedString() }))
    }

    /// As Kubernetes mounts a secret (`host.key -> ..data/host.key`, `..data -> ..2026_11_28`):
    /// the links are followed and the file they reach is checked.
    @Test func aPrivateKeyFileBehindLinksIsCheckedAtItsTarget() throws {
        let directory = TestPaths.temporaryDirectory()
        let host = HostKeyPair.generate()
        #expect(mkdir(directory + "/..2026_11_28", 0o700) == 0)
        let target = directory + "/..2026_11_28/host.key"
        try host.writePrivateKey(toNewFile: target)
        #expect(symlink("..2026_11_28", directory + "/..data") == 0)
        let link = directory + "/host.key"
        #expect(symlink("..data/host.key", link) == 0)
        #expect(try HostKeyPair(privateKeyFile: link).publicKey == host.publicKey)
        chmod(target, 0o644)
        #expect(throws: VaultError.insecurePermissions(path: link, mode: UInt32(S_IFREG | 0o644))) { try HostKeyPair(privateKeyFile: link) }
    }

    @Test func hostWrapsWorkThroughTheStorageSeam() throws {
        let storage = InMemoryStorage()
        let key = VaultKey.random()
        let vault = try Vault.create(in: storage, key: key)
        try vault.set("one", service: "s", account: "a")
        let host = HostKeyPair.generate(), other = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "b")
        try vault.addHost(other.publicKey, name: "c")
        let identity = try vault.identity()
        #expect(try Vault.open(storage, hostKey: host, identities: [identity]).string(service: "s", account: "a") == "one")
        try vault.removeHost("c")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(storage, hostKey: other, identities: [identity]) }
        #expect(try Vault.open(storage, hostKey: host, identities: [identity]).string(service: "s", account: "a") == "one")
        let evil = StoredHostWrap(name: "evil", publicKey: other.publicKey.bytes, sealedMasterKey: try HostWraps.seal(KeyHierarchy.randomMasterKey(), to: other.publicKey))
        storage.tamper { $0.hostWraps?.append(evil) }
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try Vault.open(storage, key: key).verify()
        }
    }

    @Test func asyncTwinsAddListOpenAndRemove() async throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try await vault.addHost(host.publicKey, name: "b")
        #expect(try await vault.hosts().map(\.publicKey) == [host.publicKey])
        let onB = try await Vault.open(at: path, hostKey: host, identity: try await vault.identity())
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
        let identity = try vault.identity().fingerprint
        vault.close()
        let keyFile = try HostKeyTests.hostKeyFile(host, besides: path, name: "b")
        let pinned = ["--identity", identity]
        let result = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", keyFile] + pinned)
        #expect(result.status == 0, "\(result.stderr)")
        let items = try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(ReadItem.self, from: Data($0.utf8)) }
        #expect(items.map(\.secret) == [Self.hex(Data("one".utf8))])
        // The passphrase reads it too, the host wraps being part of the authenticated header.
        let byPassphrase = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path],
                                                environment: ChildProcess.cleanEnvironment(["VAULT_PASSPHRASE": "correct horse"]))
        #expect(byPassphrase.status == 0, "\(byPassphrase.stderr)")

        // The reader checks the identity as section 12.1 says: another pin is refused.
        let otherPin = ["--identity", "vkid1:" + String(repeating: "ab", count: 32)]
        let notPinned = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", keyFile] + otherPin)
        #expect(notPinned.status == 1)
        #expect(notPinned.stderr.contains("not the one pinned"), "\(notPinned.stderr)")
        let stranger = try HostKeyTests.hostKeyFile(.generate(), besides: path, name: "stranger")
        let refused = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", stranger] + pinned)
        #expect(refused.stderr.contains("wrong passphrase or key"))

        RawDatabase(path).execute("DELETE FROM vault_host_wraps WHERE name = 'web-3'")
        let tampered = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--host-key-file", keyFile] + pinned)
        #expect(tampered.status == 1)
        #expect(tampered.stderr.contains("not the ones the vault's identity signed"), "\(tampered.stderr)")
    }

    /// A host-key handle records its host's name (the wrap's, which the vault identity
    /// signed) as the writer, and cannot declare another.
    @Test func aHostKeyHandleRecordsItsHostNameAsTheWriter() throws {
        let (vault, path) = try Fixtures.passphraseVault()
        let host = HostKeyPair.generate()
        try vault.addHost(host.publicKey, name: "web-1")
        let identity = try vault.identity()
        try vault.declareWriter("admin@console")
        try vault.set("one", service: "s", account: "a")
        let onHost = try Vault.open(at: path, hostKey: host, identity: identity)
        #expect(try onHost.writer() == "web-1")
        #expect(throws: VaultError.invalidArgument(.writerFixedByHostKey)) { try onHost.declareWriter("admin@console") }
        try onHost.set("two", service: "s", account: "a")
        let history = try vault.history(service: "s", account: "a")
        #expect(history.map(\.writer) == ["web-1", "admin@console"])
        #expect(history[1].archivedBy == "web-1")
    }
}
