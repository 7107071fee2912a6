import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// Reading must not need write access: a backup on read-only media, an immutable file,
/// a directory the user may not write, a full disk. Writes then fail with one accurate
/// error naming what cannot be written, and nothing is left behind.
@Suite(.offCooperativePool) struct ReadOnlyTests {
    static let canChattr = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr")

    /// A closed key vault with three items in its own directory (no -wal left).
    static func vault(_ label: String = #function) throws -> (directory: String, path: String, key: VaultKey) {
        let (vault, path, key) = try Fixtures.keyVault(label)
        for index in 0..<3 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
        vault.close()
        return ((path as NSString).deletingLastPathComponent, path, key)
    }

    @discardableResult
    static func expectReadable(_ path: String, key: VaultKey, sourceLocation: SourceLocation = #_sourceLocation) throws -> Vault {
        let vault = try Vault.open(at: path, key: key)
        #expect(try vault.string(service: "s", account: "a1") == "v1", sourceLocation: sourceLocation)
        #expect(try vault.items().count == 3, sourceLocation: sourceLocation)
        #expect(try vault.verify() == 3, sourceLocation: sourceLocation)
        return vault
    }

    static func chattr(_ flag: String, _ path: String) throws {
        #expect(try ChildProcess.run("/usr/bin/chattr", [flag, path]).status == 0)
    }

    @Test(.enabled(if: Mounts.isAvailable, "needs root and mount(8)"))
    func aVaultOnAReadOnlyFileSystemCanBeRead() throws {
        let (directory, _, key) = try Self.vault()
        try Mounts.withReadOnlyView(of: directory) { view in
            let path = view + "/test.vault"
            let vault = try Self.expectReadable(path, key: key)
            #expect(throws: VaultError.io(path: path, errno: EROFS)) { try vault.set("x", service: "s", account: "new") }
            #expect(throws: VaultError.io(path: path, errno: EROFS)) { try vault.rekey() }
            vault.close()
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["test.vault"])
    }

    /// A copy taken while a writer had the vault open: its latest commits are still in
    /// the -wal, and a read-only reader must see them, not the older main file.
    @Test(.enabled(if: Mounts.isAvailable, "needs root and mount(8)"))
    func commitsStillInTheLogAreReadFromReadOnlyMedia() throws {
        let (writer, path, key) = try Fixtures.keyVault()
        for index in 0..<3 { try writer.set("v\(index)", service: "s", account: "a\(index)") }
        let copy = TestPaths.temporaryDirectory("copy")
        for suffix in ["", "-wal", "-shm"] {
            Fixtures.write(Fixtures.bytes(of: path + suffix), to: copy + "/test.vault" + suffix)
        }
        writer.close()
        #expect((FileManager.default.fileSize(copy + "/test.vault-wal") ?? 0) > 0)
        try Mounts.withReadOnlyView(of: copy) { view in
            try Self.expectReadable(view + "/test.vault", key: key).close()
        }
        // Without its -shm, the log cannot be read there: refused, not read without it.
        unlink(copy + "/test.vault-shm")
        try Mounts.withReadOnlyView(of: copy) { view in
            #expect(throws: VaultError.io(path: view + "/test.vault-wal", errno: EROFS)) { try Vault.open(at: view + "/test.vault", key: key) }
        }
    }

    @Test(.enabled(if: canChattr, "needs root and chattr(1)"))
    func anImmutableVaultCanBeRead() throws {
        let (_, path, key) = try Self.vault()
        try Self.chattr("+i", path)
        defer { try? Self.chattr("-i", path) }
        let vault = try Self.expectReadable(path, key: key)
        defer { vault.close() }
        #expect(throws: VaultError.io(path: path, errno: EPERM)) { try vault.set("x", service: "s", account: "new") }
    }

    /// A user's own vault in a directory they may not write (here an immutable one, which
    /// binds root too): the error names the directory, not the file.
    @Test(.enabled(if: canChattr || geteuid() != 0, "needs root and chattr(1), or a non-root user"))
    func aVaultInADirectoryThatCannotBeWrittenCanBeRead() throws {
        let (directory, path, key) = try Self.vault()
        let code: Int32
        if geteuid() == 0 {
            try Self.chattr("+i", directory)
            code = EPERM
        } else {
            chmod(directory, 0o500)
            code = EACCES
        }
        defer { if geteuid() == 0 { try? Self.chattr("-i", directory) } else { chmod(directory, 0o700) } }
        let vault = try Self.expectReadable(path, key: key)
        #expect(throws: VaultError.io(path: directory, errno: code)) { try vault.set("x", service: "s", account: "new") }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    /// A full disk with no -wal/-shm yet: they cannot be made, so the vault is read
    /// without them, and no empty side file is left behind.
    @Test(.enabled(if: Mounts.isAvailable, "needs root and mount(8)"))
    func aFullDiskStillReads() throws {
        try Mounts.withTmpfs(kibibytes: 1024) { mountPoint in
            let path = mountPoint + "/test.vault"
            let key = VaultKey.random()
            let vault = try Vault.create(at: path, key: key)
            for index in 0..<3 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
            vault.close()
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            Mounts.fill(mountPoint)

            let reader = try Self.expectReadable(path, key: key)
            #expect(throws: VaultError.self) { try reader.set("x", service: "s", account: "new") }
            reader.close()
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(!FileManager.default.fileExists(atPath: path + "-shm"))

            unlink(mountPoint + "/filler")
            let writer = try Vault.open(at: path, key: key)
            try writer.set("x", service: "s", account: "new")
            #expect(try writer.verify() == 4)
        }
    }
}

extension FileManager {
    func fileSize(_ path: String) -> Int? {
        (try? attributesOfItem(atPath: path)[.size]) as? Int
    }
}
