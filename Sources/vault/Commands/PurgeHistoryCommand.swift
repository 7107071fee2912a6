import ArgumentParser
import VaultKit
import VaultTransfer

/// `vault purge-history`: for a secret that leaked and must go for good, with the versions
/// that still hold it.
struct PurgeHistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge-history",
        abstract: "Delete the kept versions of an item, or of every item, for good.",
        discussion: """
            Removes every kept version of SERVICE ACCOUNT (the item itself stays), or \
            without them, of every item in the vault, in one transaction. They cannot be \
            restored afterwards. Asks for confirmation on a terminal; elsewhere --yes is \
            required.

            Writes "purged N versions" and what the purge does not reach: copies made \
            before it (backups, synced or older files) still hold them, and so can the \
            storage itself until it reuses the space (docs/THREAT-MODEL.md, "Purged \
            history").

            EXAMPLES:
              vault purge-history api.example.com alice
              vault purge-history --yes            # every item, no question
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "What the secret is for; omit it and the account to purge every item's history.")
    var service: String?

    @Argument(help: "Whose secret it is within the service.")
    var account: String?

    @Option(
        name: .customLong("names-from"),
        help: ArgumentHelp("Read the service (first line) and account (second line) from this file, or '-' for standard input, instead of the command line.", valueName: "path")
    )
    var namesFile: String?

    @Flag(name: [.customShort("y"), .customLong("yes")], help: "Do not ask: purge (required when there is no terminal to ask on).")
    var yes = false

    func validate() throws {
        if namesFile != nil && (service != nil || account != nil) {
            throw ValidationError("give the service and account either as arguments or with --names-from, not both")
        }
        if service?.isEmpty == true { throw ValidationError("the service must not be empty") }
        if service != nil && account == nil { throw ValidationError("missing the account (or neither, to purge every item's history)") }
        if namesFile == "-" && !yes { throw ValidationError("--names-from - reads standard input, where the confirmation would be asked: add --yes") }
    }

    func run() throws {
        var item: (service: String, account: String)?
        if let service, let account { item = (service, account) }
        if let namesFile {
            let (service, account) = try NamesInput.read(from: namesFile, accountRequired: true)
            item = (service, account ?? "")
        }
        if !yes {
            let what = item.map { "every kept version of service \(Escaping.quoted($0.service)), account \(Escaping.quoted($0.account))" }
                ?? "every kept version of every item"
            guard let answer = try Terminal.confirm("Delete \(what) for good? [y/N] ") else {
                throw CLIError.usage("purge-history deletes versions for good: confirm with --yes when there is no terminal to ask on")
            }
            guard answer else { throw CLIError.cancelled }
        }
        let vault = try options.openItems()
        defer { vault.close() }
        let count = try vault.purgeHistory(of: item)
        var output = SecretBytes()
        output.append("purged \(count) version\(count == 1 ? "" : "s"); copies made before (backups, older files) still hold them, and the storage may until it reuses the space (docs/THREAT-MODEL.md)\n")
        try Output.writeStandardOutput(output)
    }
}
