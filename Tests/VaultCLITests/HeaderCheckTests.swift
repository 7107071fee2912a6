import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI checks in a vault's header before it trusts it: a format-1 file (no
/// tamper protection) needs an explicit upgrade, and KDF settings that would make
/// "wrong passphrase" cost minutes are refused, in a file and in `init`.
@Suite(.offCooperativePool) struct HeaderCheckTests {
    @Test func aFormatOneVaultNeedsAnExplicitUpgrade() throws {
        var cli = CLI()
        cli.environment = [:]
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/FuzzVaultFile/seed-2.vault").path
        try writePrivateFile(cli.vaultPath, try Data(contentsOf: URL(fileURLWithPath: seed)))
        let keyFile = cli.directory + "/seed.key"
        try writePrivateFile(keyFile, Data((1...32).map { UInt8($0) }))

        let refused = try cli.run(["get", "svc1", "acct1", "--key-file", keyFile])
        #expect(refused.status == 1)
        #expect(refused.stderr == "vault: vault format 1 has no tamper protection; if you trust this file as it is, run 'vault upgrade'\n")
        #expect(try cli.run(["upgrade", "--key-file", keyFile]).status == 0)
        #expect(try cli.run(["get", "svc1", "acct1", "--key-file", keyFile]).stdout == "secret 1\n")
        #expect(try cli.run(["verify", "--key-file", keyFile]).status == 0)
    }

    /// A hostile header could ask for 64 passes over 4 GiB before "wrong passphrase": the
    /// bound is 16 passes over 2 GiB (docs/FORMAT.md section 3), in `init` as in a file.
    @Test func costlyKDFSettingsAreRefused() throws {
        let cli = CLI()
        #expect(try cli.run(["init", "--kdf-opslimit", "17", "--kdf-memlimit", "8192"]).status == 2)
        #expect(try cli.run(["init", "--kdf-opslimit", "1", "--kdf-memlimit", "\(3 << 30)"]).status == 2)
        try cli.initVault()
        RawDatabase(cli.vaultPath).execute("UPDATE vault_header SET kdf_opslimit = 64, kdf_memlimit = 4294967296")
        let hostile = try cli.run("list")
        #expect(hostile.status == 1)
        #expect(hostile.stderr == "vault: vault is corrupted: KDF parameters out of bounds\n")
    }
}
