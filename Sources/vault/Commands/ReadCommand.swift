import ArgumentParser

/// `vault read vault://SERVICE/ACCOUNT`: the URI spelling of `vault get`, the same
/// references `vault run` and env files use. It runs `get` itself, so the two cannot differ.
struct ReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Write the secret of the item a vault:// URI names (the URI spelling of 'get').",
        discussion: """
            vault read vault://SERVICE/ACCOUNT is vault get SERVICE ACCOUNT. The first / \
            separates service and account; write a / inside a name as %2F and a % as %25 \
            (any %XX decodes to that byte).

            EXAMPLES:
              vault read vault://api.example.com/alice
              vault read vault://git:https:%2F%2Fgithub.com/alice
              vault read vault://db.internal/app --json | jq -r .modified
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: ArgumentHelp("The item, as vault://SERVICE/ACCOUNT.", valueName: "uri"))
    var uri: String

    @OptionGroup var format: SecretFormatOptions

    func validate() throws {
        do {
            _ = try ItemReference(uri, requireScheme: true)
        } catch {
            throw ValidationError(error.message(for: uri))
        }
    }

    func run() throws {
        let reference = try ItemReference(uri, requireScheme: true)
        var get = try GetCommand.parse(["--", reference.service, reference.account])
        get.options = options
        get.format = format
        try get.run()
    }
}
