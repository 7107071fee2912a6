import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `vault passwd` re-keys by default, so an old passphrase with an old copy of the file
/// opens nothing written afterwards; `--rewrap-only` keeps the master key.
@Suite(.offCooperativePool) struct PasswdRekeyTests {
    /// Whoever has the old passphrase and an old copy of the file has the master key the
    /// copy wraps; `passwd` replaces it, so it seals nothing written afterwards. The
    /// header's `master_key_check` (subkey 3 of the master key) shows which key is in use.
    @Test func passwdReplacesTheMasterKeyUnlessAskedOnlyToRewrap() throws {
        let cli = CLI(passphrase: "old")
        try cli.initVault()
        try cli.set("api", "alice", "before")
        let check = { RawDatabase(cli.vaultPath).rows("SELECT master_key_check FROM vault_header")[0][0] }
        // One transaction each (docs/FORMAT.md section 7): the generation moves by one.
        let generation = { RawDatabase(cli.vaultPath).integer("SELECT generation FROM vault_generation") }
        let original = check()
        let before = try #require(generation())

        let rewrapped = try cli.run(["passwd", "--rewrap-only"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "middle"])
        #expect(rewrapped.status == 0, "\(rewrapped.stderr)")
        #expect(check() == original)
        #expect(generation() == before + 1)

        let changed = try cli.run(["passwd"] + CLI.cheapKDF, env: ["VAULT_PASSPHRASE": "middle", "VAULT_NEW_PASSPHRASE": "new"])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(check() != original)
        #expect(generation() == before + 2)
        #expect(try cli.run(["get", "api", "alice"], env: ["VAULT_PASSPHRASE": "new"]).stdout == "before\n")
        #expect(try cli.run(["verify"], env: ["VAULT_PASSPHRASE": "new"]).status == 0)
        #expect(try cli.run(["get", "api", "alice"], env: ["VAULT_PASSPHRASE": "old"]).status == 1)
    }
}
