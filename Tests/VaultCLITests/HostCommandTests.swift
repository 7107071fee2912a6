import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `vault host keygen/add/list/remove` and unlocking with `--host-key` /
/// `$VAULT_HOST_KEY_FILE`, in real processes on a real file.
@Suite struct HostCommandTests {
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

        #expect(try cli.run(["host", "add", "web-2", publicB]).status == 0)
        let publicFile = cli.directory + "/c.pub"
        try Data(keygenC.stdout.utf8).write(to: URL(fileURLWithPath: publicFile))
        let addC = try cli.run(["host", "add", "web-3", "--public-key-file", publicFile])
        #expect(addC.status == 0, "\(addC.stderr)")
        let list = try cli.run(["host", "list"])
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { $0[0] } == ["web-2", "web-3"])
        #expect(rows[0][1].hasPrefix("vk1:"))
        #expect(rows[0][2] == publicB)

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
        #expect(try cli.run(["host", "add", "b", keygen.stdout]).status == 0)
        chmod(key, 0o644)
        let result = try cli.run(["list", "--host-key", key], unset: ["VAULT_PASSPHRASE"])
        #expect(result.status == 1)
        #expect(result.isOneErrorLine)
        #expect(result.stderr.contains("refusing the host key file"))
        let both = try cli.run(["list", "--host-key", key, "--key-file", key])
        #expect(both.status == 2)
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
        RawDatabase(cli.vaultPath).execute("UPDATE vault_host_wraps SET name = 'c'")
        let list = try cli.run(["host", "list"])
        #expect(list.status == 1)
        #expect(list.stderr.contains("tampered"))
        let bad = try cli.run(["host", "add", "x", "not base64"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("44 characters of base64"))
    }
}
