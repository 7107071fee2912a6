import ArgumentParser
import VaultKit

struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Replace the vault's master key and re-encrypt every item.",
        discussion: """
            Use it when the master key may have leaked (for example in a memory dump). \
            The passphrase or key file stays the same. All items are re-encrypted in one \
            transaction: after a crash the vault holds either all old or all new.

            EXAMPLE:
              vault rekey --vault ~/secrets.vault
            """
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let vault = try options.openVault()
        defer { vault.close() }
        try vault.rekey()
    }
}
