import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A vault in a directory others can create files in (such as /tmp) is refused, with the
/// advice to use a private directory.
@Suite(.offCooperativePool) struct SharedDirectoryRefusalTests {
    /// A vault directly in /tmp is refused; the advice is a private directory, since
    /// `chmod go-w /tmp` is neither possible nor wanted.
    @Test func aVaultInASharedDirectoryIsToldToMoveToAPrivateOne() throws {
        var info = stat()
        guard stat("/tmp", &info) == 0, info.st_mode & 0o1777 == 0o1777 else { return }
        let path = "/tmp/vaultkit-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).vault"
        defer { unlink(path) }
        let cli = CLI()
        let result = try cli.run(["init", "--vault", path] + CLI.cheapKDF, vault: false)
        #expect(result.status == 1)
        #expect(result.stderr == "vault: refusing the vault's directory /tmp: permissions 1777 make it a shared directory others can create files in; keep the vault in a directory of your own (mkdir -m 700 DIR)\n")
        #expect(access(path, F_OK) != 0)
    }
}
