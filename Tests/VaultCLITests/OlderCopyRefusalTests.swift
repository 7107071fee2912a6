import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The CLI keeps rollback records by default: an older copy put in the vault's place is
/// refused until it is accepted on purpose.
@Suite(.offCooperativePool) struct OlderCopyRefusalTests {
    @Test func anOlderCopyIsRefusedUntilAccepted() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "old")
        let oldCopy = try Data(contentsOf: URL(fileURLWithPath: cli.vaultPath))
        try cli.set("svc", "acct", "new")
        #expect(try cli.run("delete", "svc", "acct").status == 0)
        try writePrivateFile(cli.vaultPath, oldCopy)

        let refused = try cli.run("get", "svc", "acct")
        #expect(refused.status == 1)
        #expect(refused.isOneErrorLine)
        #expect(refused.stderr.hasPrefix("vault: \(cli.vaultPath) is older than a state this user has seen (generation 1, seen 3)"), "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("accept it once with --accept-rollback\n"))
        // Switched off, the file alone decides (and the record is left as it was).
        #expect(try cli.run(["get", "svc", "acct"], env: ["VAULT_ROLLBACK_GUARD": "off"]).stdout == "old\n")
        #expect(try cli.run("get", "svc", "acct").status == 1)
        #expect(try cli.run("get", "svc", "acct", "--accept-rollback").stdout == "old\n")
        #expect(try cli.run("get", "svc", "acct").stdout == "old\n")
    }
}
