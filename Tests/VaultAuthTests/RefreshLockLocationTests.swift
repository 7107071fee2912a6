import Testing
@testable import VaultAuth
import VaultKit

/// Where the refresh lock file is, by what the vault says it is (`Vault.location`):
/// beside a vault file, and for a vault in a storage engine never its URL taken as a path.
@Suite struct RefreshLockLocationTests {
    @Test func aVaultFilesLockIsBesideIt() {
        #expect(RefreshLock.lockFilePath(for: .file(path: "/home/a/app.vault"), environment: [:]) == "/home/a/app.vault.vaultauth-lock")
    }

    @Test func anEngineVaultsLockIsNamedByAHashOfItsURLInTheRuntimeDirectory() {
        let url = "memkv://tokens#default"
        let path = RefreshLock.lockFilePath(for: .engine(url: url), environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"])
        #expect(path.hasPrefix("/run/user/1000/vaultauth-") && path.hasSuffix(".lock"))
        #expect(!path.contains("memkv") && !path.contains("://") && !path.contains("//vaultauth"))
        // 64 hex digits: one name per URL, the same in every process.
        let hex = path.dropFirst("/run/user/1000/vaultauth-".count).dropLast(".lock".count)
        #expect(hex.count == 64 && hex.allSatisfy(\.isHexDigit))
        #expect(path == RefreshLock.lockFilePath(for: .engine(url: url), environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]))
        #expect(path != RefreshLock.lockFilePath(for: .engine(url: url + "2"), environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]))
    }

    @Test func withoutARuntimeDirectoryTheTemporaryDirectoryHoldsIt() {
        let engine = Vault.Location.engine(url: "memkv://tokens")
        #expect(RefreshLock.lockFilePath(for: engine, environment: ["TMPDIR": "/var/tmp"]).hasPrefix("/var/tmp/vaultauth-"))
        #expect(RefreshLock.lockFilePath(for: engine, environment: [:]).hasPrefix("/tmp/vaultauth-"))
        // A relative directory is no place for a lock every process must find.
        #expect(RefreshLock.lockFilePath(for: engine, environment: ["XDG_RUNTIME_DIR": "run"]).hasPrefix("/tmp/vaultauth-"))
    }
}
