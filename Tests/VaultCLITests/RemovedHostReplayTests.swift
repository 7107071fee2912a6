import Foundation
import Testing
import TestTraits
import TestSupport

/// A host removed with `vault host remove` keeps its key, and with it the old master key.
/// With write access to the file it puts the vault back as it was before its removal and
/// writes through it with `vault set --host-key` until the generation is past any seen:
/// every holder whose rollback record saw the new key refuses it (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool) struct RemovedHostReplayTests {
    @Test func aRemovedHostsReplayPastTheSeenGenerationIsRolledBack() throws {
        let cli = CLI()
        try cli.initVault()
        try cli.set("db", "admin", "v1-old-password")
        // Each holder keeps its own records, as on its own machine.
        let states = (owner: cli.directory + "/state", web2: cli.directory + "/web2-state", removed: cli.directory + "/removed-state")
        let (removedKey, web2Key) = (cli.directory + "/old.key", cli.directory + "/web2.key")
        for (name, key) in [("old", removedKey), ("web2", web2Key)] {
            let publicKey = try cli.run(["host", "keygen", "--out", key], vault: false).stdout.trimmingCharacters(in: .newlines)
            let fingerprint = try cli.run(["host", "add", name, publicKey]).stdout.trimmingCharacters(in: .newlines)
            #expect(try cli.run(["host", "pin", "--host-key", key, fingerprint], vault: false).status == 0)
        }
        let asHost = { (key: String, state: String, arguments: [String], stdin: String) throws -> ProcessResult in
            try cli.run(arguments + ["--host-key", key], stdin: Data(stdin.utf8), env: ["XDG_STATE_HOME": state], unset: ["VAULT_PASSPHRASE"])
        }
        #expect(try asHost(web2Key, states.web2, ["get", "db", "admin"], "").stdout == "v1-old-password\n")
        // What the host to be removed keeps: the vault as it is now, its wrap inside.
        let kept = cli.directory + "/kept.vault"
        RawDatabase(cli.vaultPath).copy(to: kept)

        #expect(try cli.run("host", "remove", "old").status == 0)
        try cli.set("db", "admin", "v2-new-password")
        #expect(try asHost(web2Key, states.web2, ["get", "db", "admin"], "").stdout == "v2-new-password\n")
        let generation = { RawDatabase(cli.vaultPath).integer("SELECT generation FROM vault_generation") ?? -1 }
        let seen = generation()

        RawDatabase(cli.vaultPath).putRowsBack(from: kept, hostWraps: true)
        #expect(try asHost(removedKey, states.removed, ["get", "db", "admin"], "").stdout == "v1-old-password\n")
        while generation() <= seen {
            let set = try asHost(removedKey, states.removed, ["set", "db", "admin"], "attacker's\n")
            #expect(set.status == 0, "\(set.stderr)")
            guard set.status == 0 else { return }
        }
        let forged = generation()
        // Without a record the state is taken: it verifies, and looks newer than any seen.
        #expect(try cli.run(["verify"], env: ["VAULT_ROLLBACK_GUARD": "off"]).status == 0)

        let message = "is under a master key this vault has retired (generation \(forged), seen \(seen) under a newer key)"
        for result in [
            try cli.run("get", "db", "admin"),
            try asHost(web2Key, states.web2, ["get", "db", "admin"], ""),
            try asHost(web2Key, states.web2, ["set", "db", "token"], "refreshed\n"),
        ] {
            #expect(result.status == 1 && result.stdout.isEmpty, "\(result.stdout)")
            #expect(result.isOneErrorLine && result.stderr.contains(message), "\(result.stderr)")
        }
        #expect(generation() == forged, "nothing was written")
    }
}
