import Foundation
import Testing
import TestSupport
import TestTraits
#if canImport(Glibc)
import Glibc
#endif

/// `vault host keygen/add/list/remove` and unlocking with `--host-key` /
/// `$VAULT_HOST_KEY_FILE`, in real processes on a real file.
@Suite(.offCooperativePool) struct HostCommandTests {
    @Test func aHostAddedWithItsPublicKeyUnlocksAndLosesAccessWhenRemoved() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("api.example.com", "alice", "s3cr3t")
        let keyB = cli.directory + "/b.key", keyC = cli.directory + "/c.key"

        let keygen = try cli.run(["host", "keygen", "--out", keyB], vault: false)
        #expect(keygen.status == 0, "\(keygen.stderr)")
        let publicB = keygen.stdout.trimmingCharacters(in: .newlines)
        #expect(publicB.count == 44)
        #expect(((try? FileManager.default.attributesOfItem(atPath: keyB)[.posixPermissions]) as? Int) == 0o600)
        let keygenC = try cli.run(["host", "keygen", "--out", keyC], vault: false)
        // An existing key file is never overwritten.
        let again = try cli.run(["host", "keygen", "--out", keyB], vault: false)
        #expect(again.status == 1)
        #expect(again.isOneErrorLine)

        let addB = try cli.run(["host", "add", "web-2", publicB])
        #expect(addB.status == 0, "\(addB.stderr)")
        // It prints the vault's identity, which each host pins.
        let fingerprint = addB.stdout.trimmingCharacters(in: .newlines)
        #expect(fingerprint.hasPrefix("vkid1:") && fingerprint.count == 70, "\(addB.stdout)")
        #expect(try cli.run("host", "identity").stdout == fingerprint + "\n")
        let publicFile = cli.directory + "/c.pub"
        try Data(keygenC.stdout.utf8).write(to: URL(fileURLWithPath: publicFile))
        let addC = try cli.run(["host", "add", "web-3", "--public-key-file", publicFile])
        #expect(addC.status == 0, "\(addC.stderr)")
        #expect(addC.stdout == fingerprint + "\n")
        let list = try cli.run(["host", "list"])
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { $0[0] } == ["web-2", "web-3"])
        #expect(rows[0][1].hasPrefix("vk1:"))
        #expect(rows[0][2] == publicB)

        // Not before the host has pinned the vault's identity.
        let unpinned = try cli.run(["get", "api.example.com", "alice", "--host-key", keyB], unset: ["VAULT_PASSPHRASE"])
        #expect(unpinned.status == 1)
        #expect(unpinned.isOneErrorLine)
        #expect(unpinned.stderr.contains("no pinned vault identity: run 'vault host pin --host-key \(keyB) FINGERPRINT'"), "\(unpinned.stderr)")
        let pinB = try cli.run(["host", "pin", "--host-key", keyB, fingerprint], vault: false)
        #expect(pinB.status == 0, "\(pinB.stderr)")
        #expect(((try? FileManager.default.attributesOfItem(atPath: keyB + ".pin")[.posixPermissions]) as? Int) == 0o600)
        #expect(try cli.run(["host", "pin", fingerprint], env: ["VAULT_HOST_KEY_FILE": keyC], vault: false).status == 0)

        // Host B unlocks with its own key, by option or environment, without the passphrase.
        let byOption = try cli.run(["get", "api.example.com", "alice", "--host-key", keyB], unset: ["VAULT_PASSPHRASE"])
        #expect(byOption.stdout == "s3cr3t\n", "\(byOption.stderr)")
        let byEnvironment = try cli.run(["get", "api.example.com", "alice"], env: ["VAULT_HOST_KEY_FILE": keyC], unset: ["VAULT_PASSPHRASE"])
        #expect(byEnvironment.stdout == "s3cr3t\n", "\(byEnvironment.stderr)")

        // Removal needs the passphrase: a host key cannot rewrap it.
        let fromHost = try cli.run(["host", "remove", "web-2", "--host-key", keyC], unset: ["VAULT_PASSPHRASE"])
        #expect(fromHost.status == 1)
        #expect(fromHost.stderr.contains("a host key cannot rewrap"))
        #expect(try cli.run(["host", "remove", "web-2"]).status == 0)
        let removed = try cli.run(["get", "api.example.com", "alice", "--host-key", keyB], unset: ["VAULT_PASSPHRASE"])
        #expect(removed.status == 1)
        #expect(removed.isOneErrorLine)
        #expect(removed.stderr.contains("wrong passphrase or key"))
        #expect(try cli.run(["get", "api.example.com", "alice", "--host-key", keyC], unset: ["VAULT_PASSPHRASE"]).stdout == "s3cr3t\n")
        #expect(try cli.run("get", "api.example.com", "alice").stdout == "s3cr3t\n")
        #expect(try cli.run("host", "list").stdout.split(separator: "\n").count == 1)
        #expect(try cli.run("verify").status == 0)
    }

    @Test func aHostKeyFileOthersCanReadIsRefused() throws {
        let cli = CLI()
        try cli.initVault()
        let key = cli.directory + "/b.key"
        let keygen = try cli.run(["host", "keygen", "--out", key], vault: false)
        let fingerprint = try cli.run(["host", "add", "b", keygen.stdout]).stdout.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        #expect(try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"]).status == 0)
        // The pin file gets the key file's checks: whoever rewrites it picks the vault.
        chmod(key + ".pin", 0o644)
        let openPin = try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(openPin.status == 1)
        #expect(openPin.stderr.contains("refusing the pin file"), "\(openPin.stderr)")
        chmod(key + ".pin", 0o600)
        chmod(key, 0o644)
        let result = try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("refusing the host key file"))
        let both = try cli.run(["list", "--host-key", key, "--key-file", key])
        #expect(both.status == 2)
    }

    /// A host key and its pins mounted as Kubernetes mounts secrets (`b.key ->
    /// ..data/b.key`): followed, and checked at the files they reach.
    @Test func aHostKeyAndItsPinsBehindLinksAreCheckedAtTheirTargets() throws {
        let cli = CLI()
        try cli.initVault()
        let mount = cli.directory + "/mount"
        #expect(mkdir(mount, 0o700) == 0 && mkdir(mount + "/..2026_11_28", 0o700) == 0)
        #expect(symlink("..2026_11_28", mount + "/..data") == 0)
        let target = mount + "/..2026_11_28/b.key"
        let keygen = try cli.run(["host", "keygen", "--out", target], vault: false)
        let fingerprint = try cli.run(["host", "add", "b", keygen.stdout]).stdout.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["host", "pin", "--host-key", target, fingerprint], vault: false).status == 0)
        let key = mount + "/b.key"
        #expect(symlink("..data/b.key", key) == 0 && symlink("..data/b.key.pin", key + ".pin") == 0)
        let opened = try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(opened.status == 0, "\(opened.stderr)")
        chmod(target + ".pin", 0o644)
        let openPin = try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(openPin.stderr.contains("refusing the pin file"), "\(openPin.stderr)")
    }

    @Test func theAgentIsNotHandedAHostKeyItCannotUse() throws {
        let cli = CLI()
        try cli.initVault()
        let key = cli.directory + "/b.key"
        _ = try cli.run(["host", "keygen", "--out", key], vault: false)
        let unlock = try cli.run(["unlock", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(unlock.status == 2)
        #expect(unlock.isOneErrorLine)
        #expect(unlock.stderr.contains("vault unlock cannot use --host-key"))
    }

    @Test func hostWrapsChangedInTheFileAreReportedAsTampering() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("s", "a", "one")
        let keygen = try cli.run(["host", "keygen", "--out", cli.directory + "/b.key"], vault: false)
        #expect(try cli.run(["host", "add", "b", keygen.stdout]).status == 0)
        RawDatabase(cli.vaultPath).execute("UPDATE vault_host_wraps SET name = 'c' WHERE name = 'b'")
        let list = try cli.run(["host", "list"])
        #expect(list.status == 1)
        #expect(list.stderr.contains("tampered"))
        let bad = try cli.run(["host", "add", "x", "not base64"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("44 characters of base64"))
    }

    /// The host-swap attack: whoever can write the vault file but has no passphrase
    /// builds a vault of their own, adds the host's (public) key, and moves it into place.
    /// The host, having pinned the real vault's identity, refuses it.
    @Test func anAttackersVaultMovedIntoPlaceIsRefusedByTheHost() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("db", "app", "real value")
        let key = cli.directory + "/web2.key"
        let publicKey = try cli.run(["host", "keygen", "--out", key], vault: false).stdout.trimmingCharacters(in: .newlines)
        let fingerprint = try cli.run(["host", "add", "web2", publicKey]).stdout.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        let asHost = { (arguments: [String]) in try cli.run(arguments + ["--host-key", key], unset: ["VAULT_PASSPHRASE"]) }
        #expect(try asHost(["get", "db", "app"]).stdout == "real value\n")

        // The attacker: their own passphrase, web2's public key (as `vault host list` shows it).
        let attacker = CLI("attacker", passphrase: "the attacker's own")
        try attacker.initVault()
        try attacker.set("db", "app", "attacker's value")
        #expect(try attacker.run(["host", "add", "web2", publicKey]).status == 0)
        #expect(rename(attacker.vaultPath, cli.vaultPath) == 0)

        for arguments in [["get", "db", "app"], ["verify"], ["list"]] {
            let result = try asHost(arguments)
            #expect(result.status == 1, "\(arguments): \(result.stdout)")
            #expect(result.stdout.isEmpty)
            #expect(result.isOneErrorLine)
            #expect(result.stderr.contains("tampered") && result.stderr.contains("not the one pinned for this host key"), "\(result.stderr)")
        }
        // Nor can the host be made to write into it.
        let set = try cli.run(["set", "db", "token", "--host-key", key], stdin: Data("refreshed\n".utf8), unset: ["VAULT_PASSPHRASE"])
        #expect(set.status == 1)
        #expect(try attacker.run(["get", "db", "token", "--vault", cli.vaultPath], vault: false).status != 0)
    }

    /// Wraps of the real vault changed in place (another host's wrap swapped for one
    /// sealing a master key of the attacker's): the signature no longer covers them.
    @Test func changedWrapsOrAStrippedIdentityAreRefusedByTheHost() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("db", "app", "real value")
        let key = cli.directory + "/web2.key"
        let publicKey = try cli.run(["host", "keygen", "--out", key], vault: false).stdout.trimmingCharacters(in: .newlines)
        let fingerprint = try cli.run(["host", "add", "web2", publicKey]).stdout.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        let attacker = CLI("attacker", passphrase: "the attacker's own")
        try attacker.initVault()
        #expect(try attacker.run(["host", "add", "web2", publicKey]).status == 0)
        let attackersWrap = RawDatabase(attacker.vaultPath).rows("SELECT sealed_master_key FROM vault_host_wraps WHERE name = 'web2'")[0][0]
        let raw = RawDatabase(cli.vaultPath)
        let realWrap = raw.rows("SELECT sealed_master_key FROM vault_host_wraps WHERE name = 'web2'")[0][0]

        raw.execute("UPDATE vault_host_wraps SET sealed_master_key = X'\(attackersWrap)' WHERE name = 'web2'")
        let swapped = try cli.run(["get", "db", "app", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(swapped.status == 1)
        #expect(swapped.stderr.contains("not the ones the vault's identity signed"), "\(swapped.stderr)")
        raw.execute("UPDATE vault_host_wraps SET sealed_master_key = X'\(realWrap)' WHERE name = 'web2'")
        raw.execute("DELETE FROM vault_host_wraps WHERE name = ''")
        let stripped = try cli.run(["get", "db", "app", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(stripped.status == 1)
        #expect(stripped.stderr.contains("signed by no vault identity"), "\(stripped.stderr)")
    }

    @Test func pinsAreCheckedBeforeTheyAreStored() throws {
        let cli = CLI()
        try cli.initVault()
        let key = cli.directory + "/b.key"
        _ = try cli.run(["host", "keygen", "--out", key], vault: false)
        let bad = try cli.run(["host", "pin", "--host-key", key, "vk1:0011"], vault: false)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("vkid1:"), "\(bad.stderr)")
        let noKey = try cli.run(["host", "pin", "--host-key", cli.directory + "/missing.key", try cli.run("host", "identity").stdout], vault: false)
        #expect(noKey.status == 1)
        #expect(noKey.isOneErrorLine)
        let noOption = try cli.run(["host", "pin", "vkid1:" + String(repeating: "0", count: 64)], vault: false)
        #expect(noOption.status == 2)
        #expect(!FileManager.default.fileExists(atPath: key + ".pin"))
        // Pinning twice keeps one line; another vault's identity is added beside it.
        let first = try cli.run("host", "identity").stdout.trimmingCharacters(in: .newlines)
        let other = CLI("other")
        try other.initVault()
        let second = try other.run("host", "identity").stdout.trimmingCharacters(in: .newlines)
        for fingerprint in [first, first, second] {
            #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        }
        #expect(try String(contentsOfFile: key + ".pin", encoding: .utf8) == first + "\n" + second + "\n")
    }

    /// An all-zero (low-order) public key would let anyone open the master key sealed to it.
    @Test func anAllZeroPublicKeyIsRefused() throws {
        let cli = CLI()
        try cli.initVault()
        let result = try cli.run(["host", "add", "zero", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="])
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("low-order"), "\(result.stderr)")
        #expect(try cli.run("host", "list").stdout.isEmpty)
    }
}
