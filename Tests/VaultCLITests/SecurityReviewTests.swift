import Foundation
import Testing
import TestSupport
import TestTraits
#if canImport(Glibc)
import Glibc
#endif

/// The command-line findings of the security review and of the second hardening round:
/// names that are not UTF-8, byte order in listings, terminal controls, loose key and
/// passphrase files, `passwd` keeping the master key, names on the command line, and
/// format-1 vaults (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool) struct SecurityReviewTests {
    /// Runs `vault` through the shell, so an argument can hold bytes a Swift `String`
    /// cannot (`printf` makes them).
    static func shell(_ cli: CLI, _ script: String) throws -> ProcessResult {
        var environment = ChildProcess.cleanEnvironment(cli.environment)
        environment["VAULT"] = CLI.executable
        environment["VAULT_PATH"] = cli.vaultPath
        return try ChildProcess.run("/bin/sh", ["-c", script], environment: environment)
    }

    // MARK: Names

    /// Two Latin-1 names used to become the same `caf\u{FFFD}` and overwrite each other.
    @Test func namesThatAreNotUTF8AreRefusedNotRepaired() throws {
        let cli = CLI()
        try cli.initVault()
        let first = try Self.shell(cli, #"printf 'A\n' | "$VAULT" set "$(printf 'caf\351')" bob"#)
        #expect(first.status == 2)
        #expect(first.stderr == "vault: argument 2 is not valid UTF-8; names must be UTF-8 text\n")
        let second = try Self.shell(cli, #"printf 'B\n' | "$VAULT" set "$(printf 'caf\340')" bob"#)
        #expect(second.status == 2)
        #expect(try cli.run("list").stdout == "")

        // The same from a names file.
        let names = cli.directory + "/names"
        try writePrivateFile(names, Data([0x63, 0x61, 0x66, 0xE9, 0x0A, 0x62, 0x6F, 0x62, 0x0A]))
        let fromFile = try cli.run(["set", "--names-from", names], stdin: Data("A\n".utf8))
        #expect(fromFile.status == 2)
        #expect(fromFile.stderr.contains("is not valid UTF-8"))
        #expect(try cli.run("list").stdout == "")
    }

    /// docs/CLI.md promises bytewise order; Swift's `String` order ties an NFC and an NFD
    /// spelling, which are two items, and then sorted them by account.
    @Test func listIsSortedByBytes() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("caf\u{E9}", "a", "nfc")       // 63 61 66 c3 a9
        try cli.set("cafe\u{301}", "b", "nfd")     // 63 61 66 65 cc 81: first by bytes
        #expect(try cli.run("list").stdout == "cafe\u{301}\tb\ncaf\u{E9}\ta\n")
    }

    @Test func namesCanComeFromAFileOrStandardInput() throws {
        let cli = CLI()
        try cli.initVault()
        let names = cli.directory + "/names"
        try writePrivateFile(names, Data("api.example.com\nalice\n".utf8))
        #expect(try cli.run(["set", "--names-from", names], stdin: Data("s3cr3t\n".utf8)).status == 0)
        #expect(try cli.run("get", "api.example.com", "alice").stdout == "s3cr3t\n")
        #expect(try cli.run(["get", "--names-from", "-"], stdin: Data("api.example.com\nalice".utf8)).stdout == "s3cr3t\n")
        // A secret on standard input leaves no room for names there.
        let clash = try cli.run(["set", "--names-from", "-"], stdin: Data("api.example.com\nalice\n".utf8))
        #expect(clash.status == 2)
        #expect(clash.isOneErrorLine)
        let both = try cli.run(["get", "api.example.com", "alice", "--names-from", names])
        #expect(both.status == 2)
        #expect(try cli.run(["delete", "--names-from", names]).status == 0)
        #expect(try cli.run("get", "api.example.com", "alice").status == 44)
    }

    // MARK: Terminal controls

    @Test func terminalControlsInNamesAndPathsAreEscaped() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("csi\u{9B}31m", "osc\u{9D}0;x\u{7}", "1")
        try cli.set("rtl\u{202E}gpj.exe", "lrm\u{200E}", "2")
        let list = try cli.run("list").stdout
        #expect(list == "csi\\u{009b}31m\tosc\\u{009d}0;x\\x07\nrtl\\u{202e}gpj.exe\tlrm\\u{200e}\n")
        let missing = try cli.run("get", "rtl\u{202E}x", "a\u{1B}[2J")
        #expect(missing.stderr == "vault: item not found: service 'rtl\\u{202e}x', account 'a\\x1b[2J'\n")
        // JSON output too: \u escapes a JSON reader turns back into the same names.
        let json = try cli.run("list", "--json")
        #expect(json.stdout.contains(#""service":"csi\u009b31m","account":"osc\u009d0;x\u0007""#), "\(json.stdout)")
        #expect(json.stdout.contains(#""service":"rtl\u202egpj.exe","account":"lrm\u200e""#), "\(json.stdout)")
        let get = try cli.run("get", "--json", "rtl\u{202E}gpj.exe", "lrm\u{200E}")
        #expect(get.stdout.hasPrefix(#"{"service":"rtl\u202egpj.exe","account":"lrm\u200e""#), "\(get.stdout)")
        for output in [json.standardOutput, get.standardOutput] {
            #expect(!output.contains(0x07) && output.range(of: Data([0xc2, 0x9b])) == nil && output.range(of: Data([0xe2, 0x80, 0xae])) == nil)
        }

        let odd = cli.directory + "/\u{1B}]0;title\u{7}\u{9B}.vault"
        let result = try cli.run(["get", "s", "a", "--vault", odd], vault: false)
        #expect(result.status == 1)
        #expect(result.stderr == "vault: no vault at \(cli.directory)/\\x1b]0;title\\x07\\u{009b}.vault (create one with 'vault init')\n")
    }

    // MARK: Key and passphrase files

    @Test(arguments: [mode_t(0o644), 0o640, 0o604])
    func keyAndPassphraseFilesOthersCanReadAreRefused(mode: mode_t) throws {
        var cli = CLI()
        cli.environment = [:]
        let keyFile = cli.directory + "/vault.key"
        #expect(try cli.run(["init", "--key-file", keyFile]).status == 0)
        chmod(keyFile, mode)
        let refused = try cli.run(["list", "--key-file", keyFile])
        #expect(refused.status == 1)
        #expect(refused.stderr == "vault: refusing the key file \(keyFile): permissions \(String(mode, radix: 8)) let group or others read it (chmod 600)\n")
        chmod(keyFile, 0o600)
        #expect(try cli.run(["list", "--key-file", keyFile]).status == 0)

        let passphraseCLI = CLI()
        try passphraseCLI.initVault()
        let passphraseFile = passphraseCLI.directory + "/pass"
        try writePrivateFile(passphraseFile, Data("correct horse\n".utf8))
        chmod(passphraseFile, mode)
        let loose = try passphraseCLI.run(["list"], env: ["VAULT_PASSPHRASE_FILE": passphraseFile])
        #expect(loose.status == 1)
        #expect(loose.stderr.hasPrefix("vault: refusing the passphrase file \(passphraseFile): permissions"))
        // A pipe holds nothing at rest: /dev/stdin as the passphrase file is fine.
        let piped = try passphraseCLI.run(["list"], stdin: Data("correct horse\n".utf8), env: ["VAULT_PASSPHRASE_FILE": "/dev/stdin"], unset: ["VAULT_PASSPHRASE"])
        #expect(piped.status == 0, "\(piped.stderr)")
    }

    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"))
    func aKeyFileOfAnotherUserIsRefused() throws {
        var cli = CLI()
        cli.environment = [:]
        let keyFile = cli.directory + "/vault.key"
        #expect(try cli.run(["init", "--key-file", keyFile]).status == 0)
        #expect(chown(keyFile, Unprivileged.userID, Unprivileged.userID) == 0)
        let refused = try cli.run(["list", "--key-file", keyFile])
        #expect(refused.stderr == "vault: refusing the key file \(keyFile): it belongs to another user (uid \(Unprivileged.userID))\n")
    }

    // MARK: passwd

    /// Whoever has the old passphrase and an old copy of the file has the master key the
    /// copy wraps; `passwd` now replaces it, so it seals nothing written afterwards. The
    /// header's `master_key_check` (subkey 3 of the master key) shows which key is in use.
    @Test func passwdReplacesTheMasterKeyUnlessAskedOnlyToRewrap() throws {
        let cli = CLI(passphrase: "old")
        try cli.initVault()
        try cli.set("api", "alice", "before")
        let check = { RawDatabase(cli.vaultPath).rows("SELECT master_key_check FROM vault_header")[0][0] }
        let original = check()

        let rewrapped = try cli.run(["passwd", "--rewrap-only"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "middle"])
        #expect(rewrapped.status == 0, "\(rewrapped.stderr)")
        #expect(check() == original)

        let changed = try cli.run(["passwd"] + CLI.cheapKDF, env: ["VAULT_PASSPHRASE": "middle", "VAULT_NEW_PASSPHRASE": "new"])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(check() != original)
        #expect(try cli.run(["get", "api", "alice"], env: ["VAULT_PASSPHRASE": "new"]).stdout == "before\n")
        #expect(try cli.run(["verify"], env: ["VAULT_PASSPHRASE": "new"]).status == 0)
        #expect(try cli.run(["get", "api", "alice"], env: ["VAULT_PASSPHRASE": "old"]).status == 1)
    }

    // MARK: Formats and KDF bounds

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

    /// A hostile header could ask for 64 passes over 4 GiB before "wrong passphrase";
    /// the bound is now 16 passes over 2 GiB, and the same bound applies to `init`.
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

    // MARK: Connection strings

    /// A libpq key=value string in VAULT_URL (or VAULT_PATH, or --vault) used to be read
    /// as a file path, and "no vault at ..." printed it, password and all.
    @Test func aConnectionStringIsRefusedWithoutRepeatingIt() throws {
        let cli = CLI()
        let given = "host=db.example dbname=app password=hunter2"
        for (arguments, environment, source) in [
            (["list"], ["VAULT_URL": given], "$VAULT_URL"),
            (["list"], ["VAULT_PATH": "  password = hunter2 host=db"], "$VAULT_PATH"),
            (["list", "--vault", given], [:], "--vault"),
            (["get", "s", "a", "--vault", given], [:], "--vault"),
        ] {
            let result = try cli.run(arguments, env: environment, vault: false)
            #expect(result.status == 2)
            #expect(result.stderr == "vault: \(source) holds a libpq key=value connection string, which vault does not take; give a postgres://user@host:port/db#name URL, with the password in ~/.pgpass, $PGPASSFILE or $PGPASSWORD\n")
            #expect(!result.stderr.contains("hunter2") && !result.stdout.contains("hunter2"))
        }
        // A file whose name merely holds '=' is still a file.
        let odd = cli.directory + "/a=b.vault"
        let missing = try cli.run(["list", "--vault", odd], vault: false)
        #expect(missing.stderr == "vault: no vault at \(odd) (create one with 'vault init')\n")
    }
}
