import Foundation
import TestSupport
import VaultKit

/// Builds vaults in fresh temporary directories with cheap key derivation.
enum Fixtures {
    static func vaultPath(_ label: String = #function) -> String {
        TestPaths.temporaryDirectory(label) + "/test.vault"
    }

    static func passphraseVault(_ label: String = #function, passphrase: String = "correct horse") throws -> (Vault, String) {
        let path = vaultPath(label)
        return (try Vault.create(at: path, passphrase: passphrase, kdf: testKDF), path)
    }

    static func keyVault(_ label: String = #function) throws -> (Vault, String, VaultKey) {
        let path = vaultPath(label)
        let key = VaultKey.random()
        return (try Vault.create(at: path, key: key), path, key)
    }

    /// Writes `key` to a 0600 file next to the vault, for child processes.
    static func writeKeyFile(_ key: VaultKey, besides vaultPath: String) -> String {
        let path = vaultPath + ".key"
        let data = key.withUnsafeBytes { Data($0) }
        _ = FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        return path
    }

    static func bytes(of path: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: path) ?? Data())
    }

    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    }

    static func mode(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }
}
