import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Key and passphrase files: refused when someone else could read them or they belong
/// to another user (as ssh refuses keys), and of a passphrase file only the first line
/// is read.
@Suite(.offCooperativePool) struct SecretFileTests {
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

    /// Key and passphrase files mounted as Kubernetes mounts secrets (`NAME ->
    /// ..data/NAME`, `..data -> ..DATE`): the links are followed and the file they reach
    /// is checked.
    @Test func keyAndPassphraseFilesBehindLinksAreCheckedAtTheirTarget() throws {
        var cli = CLI()
        cli.environment = [:]
        let mount = cli.directory + "/mount"
        #expect(mkdir(mount, 0o700) == 0)
        #expect(mkdir(mount + "/..2026_11_28", 0o700) == 0)
        #expect(symlink("..2026_11_28", mount + "/..data") == 0)
        let keyTarget = mount + "/..2026_11_28/vault.key"
        #expect(try cli.run(["init", "--key-file", keyTarget]).status == 0)
        let keyFile = mount + "/vault.key"
        #expect(symlink("..data/vault.key", keyFile) == 0)
        let keyed = try cli.run(["list", "--key-file", keyFile])
        #expect(keyed.status == 0, "\(keyed.stderr)")
        chmod(keyTarget, 0o644)
        let looseKey = try cli.run(["list", "--key-file", keyFile])
        #expect(looseKey.stderr == "vault: refusing the key file \(keyFile): permissions 644 let group or others read it (chmod 600)\n")

        let passphraseCLI = CLI()
        try passphraseCLI.initVault()
        let passphraseTarget = mount + "/..2026_11_28/pass"
        try writePrivateFile(passphraseTarget, Data("correct horse\n".utf8))
        let passphraseFile = mount + "/pass"
        #expect(symlink("..data/pass", passphraseFile) == 0)
        let opened = try passphraseCLI.run(["list"], env: ["VAULT_PASSPHRASE_FILE": passphraseFile], unset: ["VAULT_PASSPHRASE"])
        #expect(opened.status == 0, "\(opened.stderr)")
        chmod(passphraseTarget, 0o644)
        let loose = try passphraseCLI.run(["list"], env: ["VAULT_PASSPHRASE_FILE": passphraseFile], unset: ["VAULT_PASSPHRASE"])
        #expect(loose.stderr == "vault: refusing the passphrase file \(passphraseFile): permissions 644 let group or others read it (chmod 600)\n")
    }

    /// Only the first line of a passphrase file counts, so a long file is fine; a first
    /// line over 64 KiB is not.
    @Test func aLongPassphraseFileIsReadToItsFirstLineOnly() throws {
        let cli = CLI()
        try cli.initVault()
        let file = cli.directory + "/pass"
        try writePrivateFile(file, Data(("correct horse\n" + String(repeating: "comment line\n", count: 10_000)).utf8))
        #expect(try cli.run(["list"], env: ["VAULT_PASSPHRASE_FILE": file], unset: ["VAULT_PASSPHRASE"]).status == 0)
        try writePrivateFile(file, Data(String(repeating: "x", count: 70_000).utf8))
        let tooLong = try cli.run(["list"], env: ["VAULT_PASSPHRASE_FILE": file], unset: ["VAULT_PASSPHRASE"])
        #expect(tooLong.status == 1)
        #expect(tooLong.stderr == "vault: cannot read the passphrase file \(file): file too large\n")
    }
}
