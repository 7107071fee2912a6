import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// A vault the process may not read is an I/O error naming the path and `EACCES`, not
/// "not a vault" or "corrupted", and nothing is changed. As root (CI) the reader is a
/// real process running as `nobody`; otherwise the file's mode is taken away.
@Suite(.offCooperativePool) struct AccessDeniedTests {
    static let canDenyAccess = Unprivileged.isAvailable || geteuid() != 0

    /// A vault with three items and its key file in a directory every user can enter.
    static func vaultOthersCanReach() throws -> (path: String, key: VaultKey, keyFile: String) {
        let directory = Unprivileged.worldReadableDirectory()
        let path = directory + "/test.vault"
        let key = VaultKey.random()
        let vault = try Vault.create(at: path, key: key)
        for index in 0..<3 { try vault.set("v\(index)", service: "s", account: "a\(index)") }
        vault.close()
        let keyFile = directory + "/test.key"
        _ = FileManager.default.createFile(atPath: keyFile, contents: key.withUnsafeBytes { Data($0) }, attributes: [.posixPermissions: 0o644])
        return (path, key, keyFile)
    }

    /// Runs `vault-test-writer open-list` without access to what `deny` takes away.
    static func openList(_ path: String, keyFile: String, deny: String, mode: mode_t) throws -> String {
        let helper = TestPaths.executable("vault-test-writer")
        if Unprivileged.isAvailable {
            let result = try Unprivileged.run(helper, ["open-list", path, keyFile])
            return result.stdout + result.stderr
        }
        var info = stat()
        stat(deny, &info)
        chmod(deny, mode)
        defer { chmod(deny, info.st_mode & 0o7777) }
        return try ChildProcess.run(helper, ["open-list", path, keyFile]).stdout
    }

    @Test(.enabled(if: canDenyAccess, "needs root with setpriv, or a non-root user"))
    func aVaultFileThisUserCannotReadIsEACCES() throws {
        let (path, key, keyFile) = try Self.vaultOthersCanReach()
        #expect(Fixtures.mode(of: path) == 0o600)
        let output = try Self.openList(path, keyFile: keyFile, deny: path, mode: 0)
        #expect(output == "error io \(EACCES)\n", "\(output)")
        #expect(try Vault.open(at: path, key: key).items().count == 3)
    }

    @Test(.enabled(if: canDenyAccess, "needs root with setpriv, or a non-root user"))
    func aVaultInADirectoryThisUserCannotEnterIsEACCES() throws {
        let (path, key, keyFile) = try Self.vaultOthersCanReach()
        let directory = (path as NSString).deletingLastPathComponent
        let inner = directory + "/private"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.moveItem(atPath: path, toPath: inner + "/test.vault")
        let output = try Self.openList(inner + "/test.vault", keyFile: keyFile, deny: inner, mode: 0)
        #expect(output == "error io \(EACCES)\n", "\(output)")
        #expect(try Vault.open(at: inner + "/test.vault", key: key).items().count == 3)
    }
}
