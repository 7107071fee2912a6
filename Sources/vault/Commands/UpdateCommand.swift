import ArgumentParser

struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Replace the secret of an existing item; fails with status 44 if it does not exist.",
        discussion: """
            Like 'vault set', but never creates an item: if it does not exist, nothing \
            is written and the exit status is 44. --label and --generic, when omitted, \
            keep the stored values.

            EXAMPLE:
              printf '%s\\n' 'n3w-s3cr3t' | vault update api.example.com alice
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var arguments: WriteArguments

    func run() throws {
        try arguments.write(.update, options: options)
    }
}
