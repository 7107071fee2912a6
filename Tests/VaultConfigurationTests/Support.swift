import Foundation
import TestSupport
import VaultKit

/// A new vault with the cheap test KDF in its own temporary directory.
func makeVault(_ label: String = #function) throws -> Vault {
    try Vault.create(at: TestPaths.temporaryDirectory(label) + "/config.vault", passphrase: "config tests", kdf: testKDF)
}

/// A new vault unlocked by a random key, and a 0600 file holding that key, for the
/// `vault-test-writer` child process.
func makeKeyVault(_ label: String = #function) throws -> (vault: Vault, path: String, keyFile: String) {
    let directory = TestPaths.temporaryDirectory(label)
    let key = VaultKey.random()
    let vault = try Vault.create(at: directory + "/config.vault", key: key)
    let keyFile = directory + "/config.key"
    let bytes = key.withUnsafeBytes { Data($0) }
    guard FileManager.default.createFile(atPath: keyFile, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
        throw CocoaError(.fileWriteUnknown)
    }
    return (vault, directory + "/config.vault", keyFile)
}
