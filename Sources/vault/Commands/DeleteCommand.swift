import ArgumentParser
import VaultKit

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an item, or every item of a service.",
        discussion: """
            Exits with status 44 if the item does not exist. With --all instead of an \
            account, deletes every item of SERVICE (none is not an error).

            The deleted item's last version is kept in its history, so 'vault restore' \
            brings it back (see 'vault history --help'); --no-history keeps none.

            EXAMPLES:
              vault delete api.example.com alice
              vault delete api.example.com --all
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "What the secret is for, for example api.example.com.")
    var service: String?

    @Argument(help: "Whose secret it is within the service; omit it with --all.")
    var account: String?

    @Option(
        name: .customLong("names-from"),
        help: ArgumentHelp("Read the service (first line) and account (second line, none with --all) from this file, or '-' for standard input, instead of the command line.", valueName: "path")
    )
    var namesFile: String?

    @Flag(help: "Delete every item of SERVICE.")
    var all = false

    @Flag(name: .customLong("no-history"), help: "Keep no version of what is deleted: it cannot be restored.")
    var noHistory = false

    func validate() throws {
        if namesFile != nil {
            if service != nil || account != nil { throw ValidationError("give the service and account either as arguments or with --names-from, not both") }
            return
        }
        guard let service else { throw ValidationError("missing the service (or --names-from)") }
        if service.isEmpty { throw ValidationError("the service must not be empty") }
        if all && account != nil { throw ValidationError("give either an account or --all, not both") }
        if !all && account == nil { throw ValidationError("missing the account (or --all to delete every item of the service)") }
    }

    func run() throws {
        var (service, account) = (self.service ?? "", self.account)
        if let namesFile {
            (service, account) = try NamesInput.read(from: namesFile, accountRequired: !all)
            if all && account != nil { throw CLIError.usage("give either an account or --all, not both") }
        }
        let vault = try options.openItems()
        defer { vault.close() }
        if let account {
            guard try vault.delete(service: service, account: account, keepHistory: !noHistory) else {
                throw CLIError.itemNotFound(service: service, account: account)
            }
        } else {
            try vault.deleteAll(service: service, keepHistory: !noHistory)
        }
    }
}
