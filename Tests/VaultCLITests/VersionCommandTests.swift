import Foundation
import Testing
import TestTraits
import VaultKit

/// `vault --version` and `vault version` print the library's one version constant.
@Suite(.offCooperativePool) struct VersionCommandTests {
    @Test(arguments: [["--version"], ["version"]])
    func printsTheVersionFromVaultKit(arguments: [String]) throws {
        let cli = CLI()
        // No vault is needed, and none is created.
        let result = try cli.run(arguments, vault: false)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(result.stdout == "vault \(VaultKitVersion.current)\n")
        #expect(result.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: cli.vaultPath))
    }

    @Test func theVersionIsSemantic() {
        let parts = VaultKitVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
    }
}
