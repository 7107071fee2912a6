import Foundation
import Testing
import TestSupport
import TestTraits

/// The test harness itself: children run without a terminal, with real pipes and exit codes.
@Suite(.offCooperativePool) struct ChildProcessTests {
    @Test func runsWithPipesExitCodeAndNoTerminal() throws {
        let result = try ChildProcess.run("/bin/sh", ["-c", "cat; echo err >&2; (: </dev/tty) 2>/dev/null && echo tty; exit 3"], standardInput: Data("in\n".utf8))
        #expect(result.status == 3)
        #expect(result.stdout == "in\n")
        #expect(result.stderr == "err\n")
    }

    @Test func reportsTheKillingSignal() throws {
        let child = try ChildProcess("/bin/sleep", ["30"])
        child.send(SIGKILL)
        let result = child.wait()
        #expect(result.signal == SIGKILL)
    }

    @Test func findsTheBuiltProducts() {
        #expect(FileManager.default.isExecutableFile(atPath: TestPaths.executable("vault-test-writer")))
    }
}
