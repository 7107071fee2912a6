import ArgumentParser

struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a new item; fails with status 45 if it already exists.",
        discussion: """
            Like 'vault set', but never replaces a secret: if the item exists, nothing \
            is written and the exit status is 45.

            EXAMPLE:
              printf '%s\\n' 's3cr3t' | vault add api.example.com alice || echo "already there"
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var arguments: WriteArguments

    func run() throws {
        try arguments.write(.add, options: options)
    }
}
