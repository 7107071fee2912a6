import Foundation
import Testing
import TestSupport
import TestTraits

/// Docker's credential protocol and `vault import` read JSON with the same reader
/// (VaultTransfer's), so both refuse a lone surrogate escape: Docker's own decoder would
/// store U+FFFD, which would make two different secrets one (VaultTransferTests has the
/// reader's cases).
@Suite(.offCooperativePool) struct LoneSurrogateTests {
    @Test(arguments: [#"\ud800"#, #"x\udc00y"#, #"\ud800\u0041"#])
    func dockerStoreRefusesALoneSurrogateAndWritesNothing(secret: String) throws {
        let cli = CLI()
        try cli.initVault()
        let environment = ChildProcess.cleanEnvironment(cli.environment.merging(["VAULT_PATH": cli.vaultPath]) { $1 })
        let json = #"{"ServerURL":"https://r.example","Username":"u","Secret":""# + secret + #""}"#
        let store = try ChildProcess.run(TestPaths.executable("docker-credential-vault"), ["store"], environment: environment,
                                         standardInput: Data(json.utf8), timeout: .seconds(60))
        #expect(store.status == 1)
        #expect(store.stdout == "invalid JSON on standard input: an unpaired surrogate escape (\\uD800 to \\uDFFF without its pair)\n")
        #expect(try cli.run("list").stdout.isEmpty)
    }

    @Test func importRefusesALoneSurrogateAndWritesNothing() throws {
        let cli = CLI()
        try cli.initVault()
        let json = #"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":"a","secret":"\ud800"}]}"#
        let result = try cli.run(["import", "--format", "json", "-"], stdin: Data(json.utf8))
        #expect(result.status == 1)
        #expect(result.stderr == "vault: invalid JSON at line 1: an unpaired surrogate escape\n")
        #expect(try cli.run("list").stdout.isEmpty)
    }
}
