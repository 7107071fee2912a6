import ArgumentParser

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store a secret, adding the item or replacing its secret.",
        discussion: """
            The secret is all of standard input with one trailing newline removed, when \
            standard input is not a terminal; otherwise it is prompted for twice without \
            echo. There is deliberately no option for the secret itself.

            --label and --generic, when omitted, keep the item's stored values.

            The secret replaced is kept as a version of the item ('vault history'), \
            unless --no-history.

            EXAMPLES:
              printf '%s\\n' 's3cr3t' | vault set api.example.com alice --label 'Example API'
              vault set ssh.example.com deploy < id_ed25519
              vault set api.example.com alice            # prompts on the terminal
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var arguments: WriteArguments

    func run() throws {
        try arguments.write(.set, options: options)
    }
}
