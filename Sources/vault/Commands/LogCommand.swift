import ArgumentParser
import VaultKit

/// `vault log`: the vault's changes, newest first, from the provenance its records keep.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List the vault's changes, newest first (never secrets).",
        discussion: """
            One line per change still recorded in the vault (the current items and their \
            kept versions), tab-separated: TIME (ISO 8601, UTC), WRITER (as the writer \
            declared itself, "?" when not known), OPERATION (add, set, update, delete, \
            restore, import), SERVICE, ACCOUNT, VERSION. Names are escaped as in \
            'vault list'. Reading it needs the vault's key, like every name it holds; \
            what 'vault purge-history' removed, or retention dropped, is gone from it too.

            --json writes an array of objects: time, writer, operation, service, account, \
            version.

            EXAMPLES:
              vault log --limit 20
              vault log --json | jq -r '.[] | select(.operation == "delete") | .service'
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(help: ArgumentHelp("Only the newest N changes.", valueName: "n"))
    var limit: Int?

    @Flag(help: "Write a JSON array of objects.")
    var json = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit needs a number of at least 1") }
    }

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        let changes = try vault.changes(limit: limit)
        try Output.writeStandardOutput(json ? HistoryOutput.json(changes) : HistoryOutput.lines(changes))
    }
}
