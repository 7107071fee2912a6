import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A vault the CLI cannot write (a file size limit, an immutable file): one accurate
/// error line, nothing lost, and reads still work.
@Suite(.offCooperativePool) struct UnwritableVaultTests {
    /// Past a file size limit (`ulimit -f`) the kernel sends SIGXFSZ, whose default action
    /// kills the process without a message (status 153): the CLI reports the write instead.
    @Test func aFileSizeLimitIsOneErrorLineAndLosesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "before", "kept")
        var environment = ChildProcess.cleanEnvironment(cli.environment)
        environment["VAULT"] = CLI.executable
        environment["VAULT_PATH"] = cli.vaultPath
        // A 1 MiB secret against a limit of 64 blocks (32 KiB in dash's 512-byte blocks).
        let result = try ChildProcess.run("/bin/sh", ["-c", #"head -c 1048576 /dev/zero | tr '\0' x | (ulimit -f 64; exec "$VAULT" set svc big)"#],
                                          environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.isOneErrorLine)
        #expect(result.stderr.hasSuffix(": file too large\n"), "\(result.stderr)")
        #expect(try cli.run("get", "svc", "before").stdout == "kept\n")
        #expect(try cli.run("get", "svc", "big").status == 44)
        #expect(try cli.run("verify").status == 0)
    }

    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"), "needs root and chattr(1)"))
    func anImmutableVaultReadsAndRefusesWritesWithOneAccurateLine() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "s3cr3t")
        #expect(try ChildProcess.run("/usr/bin/chattr", ["+i", cli.vaultPath]).status == 0)
        defer { _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", cli.vaultPath]) }
        #expect(try cli.run("get", "svc", "acct").stdout == "s3cr3t\n")
        #expect(try cli.run("list").stdout == "svc\tacct\n")
        #expect(try cli.run("verify").status == 0)
        let write = try cli.run("set", "svc", "other", stdin: "x\n")
        #expect(write.status == 1)
        #expect(write.stderr == "vault: \(cli.vaultPath): operation not permitted\n")
    }
}
