import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// `vault passwd` changes the passphrase and re-keys in one transaction: whatever stops
/// it (a full disk, a file size limit), a failure leaves the old passphrase in force with
/// every item, and a success leaves only the new one. It used to commit the new
/// passphrase first and then fail in the re-key, reporting failure for a change made.
@Suite(.offCooperativePool) struct PasswdAtomicityTests {
    static let oldPassphrase = "correct horse"
    static let newPassphrase = "battery staple"
    /// About 260 KiB of rows: a re-key writes all of them again, a re-wrap a page or two.
    static let itemCount = 40
    static let secretByteCount = 6_000

    /// A vault of ``itemCount`` items at `directory/test.vault`, written by the library.
    static func fill(_ cli: CLI) throws {
        let vault = try Vault.create(at: cli.vaultPath, passphrase: oldPassphrase, kdf: testKDF)
        defer { vault.close() }
        try vault.batch { batch in
            for index in 0..<itemCount {
                try batch.set(secret(index), service: "svc", account: "a\(index)")
            }
        }
    }

    static func secret(_ index: Int) -> String {
        String(repeating: String(UnicodeScalar(UInt8(65 + index % 26))), count: secretByteCount)
    }

    enum Outcome { case succeeded, failed }

    /// Checks what `result` claims against which passphrase opens the vault now.
    static func check(_ result: ProcessResult, at path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Outcome {
        let (inForce, refused) = result.status == 0 ? (newPassphrase, oldPassphrase) : (oldPassphrase, newPassphrase)
        if result.status != 0 {
            #expect(result.status == 1, "\(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.isOneErrorLine, "\(result.stderr)", sourceLocation: sourceLocation)
        }
        let vault = try Vault.open(at: path, passphrase: inForce)
        defer { vault.close() }
        #expect(try vault.verify() == itemCount, sourceLocation: sourceLocation)
        #expect(try vault.string(service: "svc", account: "a7") == secret(7), sourceLocation: sourceLocation)
        #expect(throws: VaultError.wrongPassphrase, "status \(result.status): \(result.stderr)", sourceLocation: sourceLocation) {
            try Vault.open(at: path, passphrase: refused)
        }
        return result.status == 0 ? .succeeded : .failed
    }

    /// The environment of a `vault passwd` run: both passphrases, rollback records in
    /// `stateDirectory` (off the full disk, so only the vault competes for space).
    static func passwdEnvironment(_ cli: CLI, stateDirectory: String) -> [String: String] {
        var environment = ChildProcess.cleanEnvironment([
            "VAULT_PASSPHRASE": oldPassphrase, "VAULT_NEW_PASSPHRASE": newPassphrase,
            "XDG_STATE_HOME": stateDirectory, "VAULT_PATH": cli.vaultPath,
        ])
        environment["VAULT"] = CLI.executable
        return environment
    }

    /// A full disk at several levels of free space, from 48 KiB (the re-wrap fits, the
    /// re-key does not) to 4 MiB (both fit).
    @Test(.enabled(if: Mounts.isAvailable, "needs root to mount a tmpfs"))
    func aFullDiskLeavesTheOldPassphraseOrOnlyTheNew() throws {
        var outcomes: [Outcome] = []
        for freeKiB in [48, 160, 480, 4_096] {
            try Mounts.withTmpfs(kibibytes: 8_192) { mountPoint in
                let cli = CLI(inDirectory: mountPoint, passphrase: Self.oldPassphrase)
                try Self.fill(cli)
                Mounts.fill(mountPoint)
                Self.free(kibibytes: freeKiB, of: mountPoint + "/filler")
                let state = TestPaths.temporaryDirectory("passwd-state-\(freeKiB)")
                let result = try ChildProcess.run(CLI.executable, ["passwd"], environment: Self.passwdEnvironment(cli, stateDirectory: state))
                if result.status != 0 {
                    #expect(result.stderr.hasSuffix(": no space left on device\n"), "\(freeKiB) KiB free: \(result.stderr)")
                }
                // Room again, to open and check the vault.
                unlink(mountPoint + "/filler")
                outcomes.append(try Self.check(result, at: cli.vaultPath))
            }
        }
        #expect(outcomes.first == .failed, "the smallest level must fail, or it tests nothing")
        #expect(outcomes.last == .succeeded)
    }

    /// `ulimit -f` at several sizes (512-byte blocks): 100 is the issue's.
    @Test func aFileSizeLimitLeavesTheOldPassphraseOrOnlyTheNew() throws {
        var outcomes: [Outcome] = []
        for blocks in [100, 400, 1_600, 12_800] {
            let cli = CLI("passwd-ulimit-\(blocks)", passphrase: Self.oldPassphrase)
            try Self.fill(cli)
            let state = cli.directory + "/state"
            let result = try ChildProcess.run("/bin/sh", ["-c", "ulimit -f \(blocks); exec \"$VAULT\" passwd --vault \"$VAULT_PATH\""],
                                              environment: Self.passwdEnvironment(cli, stateDirectory: state))
            if result.status != 0 {
                #expect(result.stderr.hasSuffix(": file too large\n"), "ulimit -f \(blocks): \(result.stderr)")
            }
            outcomes.append(try Self.check(result, at: cli.vaultPath))
        }
        #expect(outcomes.first == .failed, "the smallest limit must fail, or it tests nothing")
        #expect(outcomes.last == .succeeded)
    }

    /// `--rewrap-only` is one O(1) transaction too: it succeeds where the re-key cannot.
    @Test func rewrapOnlyFitsWhereTheRekeyDoesNot() throws {
        let cli = CLI(passphrase: Self.oldPassphrase)
        try Self.fill(cli)
        let result = try ChildProcess.run("/bin/sh", ["-c", "ulimit -f 100; exec \"$VAULT\" passwd --rewrap-only --vault \"$VAULT_PATH\""],
                                          environment: Self.passwdEnvironment(cli, stateDirectory: cli.directory + "/state"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.check(result, at: cli.vaultPath) == .succeeded)
    }

    /// Truncates the file that filled the disk so that `kibibytes` are free again.
    static func free(kibibytes: Int, of filler: String) {
        var status = stat()
        guard stat(filler, &status) == 0 else { return }
        _ = truncate(filler, max(0, status.st_size - off_t(kibibytes * 1024)))
    }
}
