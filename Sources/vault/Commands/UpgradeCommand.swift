import ArgumentParser
import VaultKit

struct UpgradeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Upgrade a vault of format 1 to the current format.",
        discussion: """
            Format 1 vaults (written before VaultKit kept a manifest of its rows) have \
            nothing that shows whether a row was deleted or put back from an older copy, \
            so VaultKit no longer opens them by itself. Upgrading accepts the rows as \
            they are now and protects them from then on: run it only on a file you have \
            kept yourself. (A newer vault rewritten to look like format 1 is detected \
            and refused.) Format 2 vaults are verified and upgraded automatically; for \
            them, and for current ones, this command changes nothing.

            EXAMPLE:
              vault upgrade --vault ~/old.vault && vault verify --vault ~/old.vault
            """
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let vault = try options.openVault(upgradingFormatOne: true)
        vault.close()
    }
}
