import Foundation
import Testing
import TestSupport
import TestTraits

/// `vault import` and `vault export` with a terminal for standard input and output
/// (a real pseudo-terminal from `script(1)`, as in ``TerminalTests``).
@Suite(.offCooperativePool, .enabled(if: FileManager.default.isExecutableFile(atPath: TerminalSession.script)))
struct ImportExportTerminalTests {
    @Test func exportRefusesATerminalWithoutPlaintext() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "on-screen-secret")
        let session = try TerminalSession(["export", "--format", "json", "--vault", cli.vaultPath], environment: cli.environment)
        let result = session.finish()
        #expect(result.status == 2)
        #expect(result.stdout.contains("add --plaintext to confirm"))
        #expect(!result.stdout.contains("on-screen-secret"))
    }

    @Test func importFromATerminalIsRefusedBeforeReadingAnything() throws {
        let cli = CLI()
        try cli.initVault()
        let session = try TerminalSession(["import", "--format", "json", "-", "--vault", cli.vaultPath], environment: cli.environment)
        let result = session.finish()
        #expect(result.status == 2)
        #expect(result.stdout.contains("vault: standard input is a terminal; pipe the export in or name its file"))
    }
}
