import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// Another local user must not be able to plant SQLite's side files next to a vault, or
/// the vault itself (docs/THREAT-MODEL.md, "Other users of the machine"): VaultKit
/// refuses a directory others can write, side files that are not this user's own, a
/// vault owned by someone else, and a symbolic link in the vault's place.
@Suite(.offCooperativePool) struct SharedDirectoryTests {
    /// A fresh directory with `mode` (for example 1777, like /tmp).
    static func directory(mode: mode_t, _ label: String = #function) -> String {
        let path = TestPaths.temporaryDirectory(label) + "/shared"
        mkdir(path, 0o700)
        chmod(path, mode)
        return path
    }

    static func vaultWithOneItem(_ label: String = #function) throws -> (String, VaultKey) {
        let (vault, path, key) = try Fixtures.keyVault(label)
        try vault.set("s", service: "api", account: "alice")
        vault.close()
        return (path, key)
    }

    @Test(arguments: [mode_t(0o1777), 0o777, 0o775, 0o1733])
    func aDirectoryOthersCanWriteIsRefused(mode: mode_t) throws {
        let shared = Self.directory(mode: mode)
        let path = shared + "/test.vault"
        let expected = VaultError.insecurePermissions(path: shared, mode: UInt32(S_IFDIR) | UInt32(mode))
        #expect(throws: expected) { try Vault.create(at: path, key: VaultKey.random()) }
        #expect(!FileManager.default.fileExists(atPath: path))

        // A vault moved there later is refused when opened, before SQLite creates its side files.
        let (original, key) = try Self.vaultWithOneItem()
        try FileManager.default.moveItem(atPath: original, toPath: path)
        #expect(throws: expected) { try Vault.open(at: path, key: key) }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))

        chmod(shared, 0o700)
        #expect(try Vault.open(at: path, key: key).string(service: "api", account: "alice") == "s")
    }

    /// A side file that allows more than the vault (here world-writable, as one planted
    /// by another user with a permissive umask would be) is refused and left alone.
    @Test(arguments: ["-wal", "-shm"])
    func aSideFileOthersCanAccessIsRefused(suffix: String) throws {
        let (path, key) = try Self.vaultWithOneItem()
        let planted = path + suffix
        #expect(FileManager.default.createFile(atPath: planted, contents: Data(), attributes: [.posixPermissions: 0o666]))
        chmod(planted, 0o666)
        #expect(throws: VaultError.insecurePermissions(path: planted, mode: UInt32(S_IFREG) | 0o666)) { try Vault.open(at: path, key: key) }
        #expect(Fixtures.bytes(of: planted).isEmpty)
    }

    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"), arguments: ["-wal", "-shm", ""])
    func aFileOfAnotherUserIsRefused(suffix: String) throws {
        let (path, key) = try Self.vaultWithOneItem()
        let target = path + suffix
        if !suffix.isEmpty {
            #expect(FileManager.default.createFile(atPath: target, contents: Data(), attributes: [.posixPermissions: 0o600]))
        }
        #expect(chown(target, Unprivileged.userID, Unprivileged.userID) == 0)
        #expect(throws: VaultError.untrustedOwner(path: target, uid: Unprivileged.userID)) { try Vault.open(at: path, key: key) }
    }

    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"))
    func aDirectoryOfAnotherUserIsRefused() throws {
        let (path, key) = try Self.vaultWithOneItem()
        let directory = (path as NSString).deletingLastPathComponent
        #expect(chown(directory, Unprivileged.userID, Unprivileged.userID) == 0)
        #expect(throws: VaultError.untrustedOwner(path: directory, uid: Unprivileged.userID)) { try Vault.open(at: path, key: key) }
    }

    @Test(arguments: ["", "-wal"])
    func aSymbolicLinkIsRefused(suffix: String) throws {
        let (path, key) = try Self.vaultWithOneItem()
        let elsewhere = TestPaths.temporaryDirectory() + "/elsewhere"
        if suffix.isEmpty {
            try FileManager.default.moveItem(atPath: path, toPath: elsewhere)
        } else {
            #expect(FileManager.default.createFile(atPath: elsewhere, contents: Data(), attributes: [.posixPermissions: 0o600]))
        }
        #expect(symlink(elsewhere, path + suffix) == 0)
        #expect(throws: VaultError.symbolicLink(path: path + suffix)) { try Vault.open(at: path, key: key) }
        #expect(Fixtures.bytes(of: elsewhere).isEmpty == !suffix.isEmpty)
    }
}
