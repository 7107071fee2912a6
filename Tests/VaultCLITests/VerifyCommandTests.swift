import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault verify`: the whole-vault check, for scripts and cron.
@Suite(.offCooperativePool) struct VerifyCommandTests {
    @Test func anIntactVaultVerifiesWithItsItemCount() throws {
        let cli = CLI()
        try cli.initVault()
        let empty = try cli.run("verify")
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout == "ok: 0 items\n")
        try cli.set("svc", "one", "first")
        try cli.set("svc", "two", "second")
        let result = try cli.run("verify")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok: 2 items\n")
        #expect(result.stderr.isEmpty)
    }

    /// A row deleted with SQL, as `sqlite3 test.vault 'DELETE ...'` would: `list` and
    /// `verify` fail with one line and status 1 instead of quietly showing one item less.
    @Test func aRowDeletedBehindTheToolsBackFailsVerifyAndList() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "one", "first")
        try cli.set("svc", "two", "second")
        RawDatabase(cli.vaultPath).execute("DELETE FROM vault_items WHERE lookup_id = (SELECT lookup_id FROM vault_items LIMIT 1)")
        for command in [["verify"], ["list"]] {
            let result = try cli.run(command)
            #expect(result.status == 1, "\(command)")
            #expect(result.stdout.isEmpty)
            #expect(result.isOneErrorLine)
            #expect(result.stderr.contains("tampered"), "\(result.stderr)")
        }
    }
}
