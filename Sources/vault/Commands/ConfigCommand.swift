import ArgumentParser
import VaultKit
import VaultTransfer

/// `vault config`: settings kept (sealed) in the vault itself, so every host and program
/// that opens it follows them.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show or change the vault's own settings.",
        discussion: """
            Settings live in the vault, sealed like its items, so they hold for every \
            program and host that writes to it.

            EXAMPLE:
              vault config history-retention        # prints 10
              vault config history-retention 30
            """,
        subcommands: [ConfigHistoryRetentionCommand.self]
    )
}

struct ConfigHistoryRetentionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history-retention",
        abstract: "Show or set how many versions of each item the vault keeps.",
        discussion: """
            Without N, writes the number (10 unless set). With N (0 to 1000), each item \
            keeps at most its N newest earlier versions: older ones are dropped at once, \
            in the same transaction, and from then on by the write that makes one more \
            (0 keeps none). The setting is sealed in the vault, so every writer follows it.
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: ArgumentHelp("The number of versions to keep of each item (0 keeps none).", valueName: "n"))
    var versions: Int?

    func validate() throws {
        if let versions, versions < 0 { throw ValidationError("the retention is a number of versions, 0 or more") }
    }

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        if let versions {
            try vault.setHistoryRetention(versions)
        } else {
            var output = SecretBytes()
            output.append("\(try vault.historyRetention())\n")
            try Output.writeStandardOutput(output)
        }
    }
}
