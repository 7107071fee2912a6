import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit
import VaultTransfer

/// `vault history`: the versions an item's overwrites and deletes kept, newest first.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the kept versions of an item, newest first (never their secrets).",
        discussion: """
            Every 'set', 'update', 'delete' and 'restore' keeps what it replaces as a \
            version of the item, sealed like the item, up to the vault's retention \
            ('vault config history-retention', 10 by default); --no-history on a write \
            keeps none. 'vault get --version N' reads a version, 'vault restore --version N' \
            makes it current again, 'vault purge-history' removes versions for good.

            One line per version, tab-separated: NUMBER, MODIFIED (when that version was \
            written, ISO 8601, UTC), SIZE (of the secret, in bytes), WRITER (who wrote it, \
            as the writer declared itself: see VAULT_WRITER in 'vault --help'), OPERATION \
            (add, set, update, restore or import), then "current" for the item as it is, \
            or "archived TIME by WRITER (OPERATION)": when, by whom and by which operation \
            it was replaced or deleted. Names are escaped as in 'vault list'; a writer that \
            is not known (written before VaultKit kept one) is "?".

            --json writes an array of objects: version, the item's attributes (service, \
            account, label, generic, created, modified), size, writer, operation, \
            archived, archivedBy, archivedBecause (null for the current item).

            Exits with status 44 if the item neither exists nor has a kept version.

            EXAMPLES:
              vault history api.example.com alice
              vault history api.example.com alice --json | jq -r '.[] | select(.archived) | .version'
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var item: ItemArguments

    @Flag(help: "Write a JSON array of objects.")
    var json = false

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        let versions = try item.run { (service, account) -> [VaultItemVersion] in
            let versions = try vault.history(service: service, account: account)
            if versions.isEmpty { throw CLIError.itemNotFound(service: service, account: account) }
            return versions
        }
        try Output.writeStandardOutput(json ? HistoryOutput.json(versions) : HistoryOutput.lines(versions))
    }
}
