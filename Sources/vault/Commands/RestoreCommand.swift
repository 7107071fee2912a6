import ArgumentParser
import VaultKit

/// `vault restore`: a kept version becomes the current item again.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Make a kept version of an item current again.",
        discussion: """
            The version's secret, label and generic data become the item's, as a new \
            version with a new number (the operation "restore"); the item as it was, if \
            it exists, is kept as a version in its turn, so a restore can be undone like \
            any write. Restores a deleted item too. Writes nothing on success.

            Exits with status 44, changing nothing, if the item has no version N.

            EXAMPLES:
              vault history api.example.com alice                 # find the number
              vault restore api.example.com alice --version 3
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var item: ItemArguments

    @Option(name: .customLong("version"), help: ArgumentHelp("The version to restore, as 'vault history' numbers it.", valueName: "n"))
    var versionNumber: UInt64

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        try item.run { service, account in
            try HistoryNames.naming(service: service, account: account, version: versionNumber) {
                try vault.restore(service: service, account: account, version: versionNumber)
            }
        }
    }
}
