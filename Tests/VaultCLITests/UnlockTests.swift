import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// Where the vault is, and what unlocks it: environment, passphrase files, key files.
@Suite(.offCooperativePool) struct UnlockTests {
    @Test func initRefusesToOverwriteAnExistingVault() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "keep me")
        let again = try cli.run(["init"] + CLI.cheapKDF)
        #expect(again.status == 1)
        #expect(again.isOneErrorLine)
        #expect(again.stderr.contains("already exists"))
        #expect(try cli.run("get", "svc", "acct").stdout == "keep me\n")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.vaultPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aMissingVaultIsReportedBeforeAskingForAPassphrase() throws {
        let cli = CLI()
        let result = try cli.run(["list"], unset: ["VAULT_PASSPHRASE"])
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("no vault at \(cli.vaultPath)"))
    }

    @Test func wrongPassphraseFailsWithStatus1() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "acct", "the-secret")
        let result = try cli.run(["get", "svc", "acct"], env: ["VAULT_PASSPHRASE": "not the passphrase"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("wrong passphrase"))
        #expect(!result.stderr.contains("not the passphrase"))
        #expect(!result.stderr.contains("the-secret"))
    }

    /// Without a variable and without a terminal (the test's children have none), the
    /// tool fails at once instead of waiting for input that will never come.
    @Test func noPassphraseAndNoTerminalFailsFast() throws {
        let cli = CLI()
        try cli.initVault()
        let fresh = cli.directory + "/fresh.vault"
        for arguments in [["list"], ["get", "svc", "acct"], ["set", "svc", "acct"], ["passwd"], ["init"]] {
            let path = arguments == ["init"] ? fresh : cli.vaultPath
            // stdin stays open until the child has exited: a tool reading the passphrase from
            // it would never exit by itself, and be killed by the wait's timeout instead.
            let child = try ChildProcess(CLI.executable, arguments + ["--vault", path], environment: ChildProcess.cleanEnvironment(), standardInput: nil)
            let result = child.wait()
            child.closeStandardInput()
            #expect(result.signal == nil, "\(arguments)")
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr == "vault: no passphrase available: set VAULT_PASSPHRASE_FILE or VAULT_PASSPHRASE, use --key-file, or run on a terminal\n", "\(arguments)")
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
    }

    @Test func passphraseFileBeatsThePassphraseVariable() throws {
        let cli = CLI(passphrase: "right one")
        try cli.initVault()
        try cli.set("svc", "acct", "x")
        let good = cli.directory + "/good-pass"
        let bad = cli.directory + "/bad-pass"
        try writePrivateFile(good, Data("right one\nsecond line is ignored\n".utf8))
        try writePrivateFile(bad, Data("wrong one\n".utf8))

        let fileWins = try cli.run(["get", "svc", "acct"], env: ["VAULT_PASSPHRASE_FILE": good, "VAULT_PASSPHRASE": "wrong"])
        #expect(fileWins.status == 0)
        #expect(fileWins.stdout == "x\n")

        let stillFile = try cli.run(["get", "svc", "acct"], env: ["VAULT_PASSPHRASE_FILE": bad, "VAULT_PASSPHRASE": "right one"])
        #expect(stillFile.status == 1)
        #expect(stillFile.stderr.contains("wrong passphrase"))

        let missing = try cli.run(["get", "svc", "acct"], env: ["VAULT_PASSPHRASE_FILE": cli.directory + "/nope"])
        #expect(missing.status == 1)
        #expect(missing.isOneErrorLine)
        #expect(missing.stderr.contains("cannot read the passphrase file"))
    }

    @Test func vaultPathVariableAndXDGDefaultLocateTheVault() throws {
        let cli = CLI()
        let explicit = cli.directory + "/from-env.vault"
        #expect(try cli.run(["init"] + CLI.cheapKDF, env: ["VAULT_PATH": explicit], vault: false).status == 0)
        #expect(FileManager.default.fileExists(atPath: explicit))

        let dataHome = cli.directory + "/xdg"
        #expect(try cli.run(["init"] + CLI.cheapKDF, env: ["XDG_DATA_HOME": dataHome], unset: ["VAULT_PATH"], vault: false).status == 0)
        #expect(FileManager.default.fileExists(atPath: dataHome + "/vault/default.vault"))

        let home = cli.directory + "/home"
        #expect(try cli.run(["init"] + CLI.cheapKDF, env: ["HOME": home], unset: ["VAULT_PATH", "XDG_DATA_HOME"], vault: false).status == 0)
        #expect(FileManager.default.fileExists(atPath: home + "/.local/share/vault/default.vault"))

        // --vault beats VAULT_PATH.
        #expect(try cli.run(["init"] + CLI.cheapKDF, env: ["VAULT_PATH": explicit]).status == 0)
        #expect(FileManager.default.fileExists(atPath: cli.vaultPath))
    }

    @Test func initWithKeyFileCreatesAPrivateRandomKeyAndUsesIt() throws {
        let cli = CLI()
        let keyFile = cli.directory + "/vault.key"
        let created = try cli.run(["init", "--key-file", keyFile], unset: ["VAULT_PASSPHRASE"])
        #expect(created.status == 0, "\(created.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(attributes[.size] as? Int == 32)

        #expect(try cli.run(["set", "svc", "acct", "--key-file", keyFile], stdin: Data("keyed\n".utf8), unset: ["VAULT_PASSPHRASE"]).status == 0)
        let viaVariable = try cli.run(["get", "svc", "acct"], env: ["VAULT_KEY_FILE": keyFile], unset: ["VAULT_PASSPHRASE"])
        #expect(viaVariable.status == 0)
        #expect(viaVariable.stdout == "keyed\n")

        // A passphrase does not open a key vault.
        let withPassphrase = try cli.run("get", "svc", "acct")
        #expect(withPassphrase.status == 1)
        #expect(withPassphrase.isOneErrorLine)

        // Another key does not either.
        let otherKey = cli.directory + "/other.key"
        try writePrivateFile(otherKey, Data((0..<32).map { UInt8($0) }))
        let wrongKey = try cli.run(["get", "svc", "acct", "--key-file", otherKey])
        #expect(wrongKey.status == 1)
        #expect(wrongKey.stderr.contains("wrong passphrase or key"))

        // A key file of the wrong length is refused with a clear message.
        let shortKey = cli.directory + "/short.key"
        try writePrivateFile(shortKey, Data(repeating: 1, count: 31))
        let short = try cli.run(["get", "svc", "acct", "--key-file", shortKey])
        #expect(short.status == 1)
        #expect(short.stderr.contains("exactly 32"))
    }

    @Test func initWithAnExistingKeyFileUsesItsKey() throws {
        let cli = CLI()
        let keyFile = cli.directory + "/shared.key"
        let key = Data((0..<32).map { UInt8(255 - $0) })
        try writePrivateFile(keyFile, key)
        #expect(try cli.run(["init", "--key-file", keyFile]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyFile)) == key)
        #expect(try cli.run(["set", "svc", "acct", "--key-file", keyFile], stdin: Data("v\n".utf8)).status == 0)
        #expect(try cli.run(["get", "svc", "acct", "--key-file", keyFile]).stdout == "v\n")
    }

    @Test func passwdChangesThePassphrase() throws {
        let cli = CLI(passphrase: "old pass")
        try cli.initVault()
        try cli.set("svc", "acct", "kept")
        let changed = try cli.run(["passwd"] + CLI.cheapKDF, env: ["VAULT_NEW_PASSPHRASE": "new pass"])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try cli.run("get", "svc", "acct").status == 1)
        let reopened = try cli.run(["get", "svc", "acct"], env: ["VAULT_PASSPHRASE": "new pass"])
        #expect(reopened.stdout == "kept\n")
    }

    @Test func passwdKeepsTheVaultsKDFCostUnlessToldOtherwise() throws {
        let cli = CLI(passphrase: "old pass")
        try cli.initVault()
        try cli.set("svc", "acct", "kept")
        // No --kdf: the cheap cost recorded at init is kept (the default would be 256 MiB).
        let changed = try cli.run(["passwd"], env: ["VAULT_NEW_PASSPHRASE": "new pass"])
        #expect(changed.status == 0, "\(changed.stderr)")
        let vault = try Vault.open(at: cli.vaultPath, passphrase: "new pass")
        #expect(try vault.kdfParameters == KDFParameters(opsLimit: 1, memoryLimit: 8192))
    }

    @Test func passwdWithoutANewPassphraseFailsFast() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run(["passwd"] + CLI.cheapKDF)
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("no new passphrase"))
    }

    @Test func rekeyKeepsEveryItemReadable() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("svc", "a", "one")
        try cli.set("svc", "b", "two")
        #expect(try cli.run("rekey").status == 0)
        #expect(try cli.run("get", "svc", "a").stdout == "one\n")
        #expect(try cli.run("get", "svc", "b").stdout == "two\n")
    }
}
