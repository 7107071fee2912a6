import Foundation
import Testing
import TestTraits
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A libpq `key=value` connection string given where a vault location goes is refused
/// without being repeated, since it may hold a password.
@Suite(.offCooperativePool) struct ConnectionStringTests {
    /// A libpq key=value string in VAULT_URL (or VAULT_PATH, or --vault) taken as a file
    /// path would be printed by "no vault at ...", password and all.
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
