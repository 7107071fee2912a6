import ArgumentParser
import Foundation
import VaultKit

/// The root command only wires the subcommands together; each lives in its own file.
@main
struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Store and read secrets in an encrypted VaultKit vault.",
        discussion: """
            Each secret is an item identified by a SERVICE and an ACCOUNT, like a \
            generic password in the macOS keychain. The vault is one encrypted file.

            VAULT LOCATION: --vault PATH (every subcommand accepts it), else $VAULT_PATH, \
            else ${XDG_DATA_HOME:-$HOME/.local/share}/vault/default.vault.

            UNLOCKING: --key-file PATH or $VAULT_KEY_FILE (a raw 32-byte key), else the \
            first line of $VAULT_PASSPHRASE_FILE, else $VAULT_PASSPHRASE, else a no-echo \
            prompt on the terminal. Without any of them (no terminal, as in CI) the \
            command fails at once instead of waiting.

            SECRETS are read from standard input when it is not a terminal (all of it, \
            minus one trailing newline), else prompted for without echo. No option \
            takes a secret: the command line is visible to every user of the machine.

            EXIT STATUS: 0 success, 1 error, 2 usage error, 44 item not found, \
            45 item already exists. Errors are one line on standard error starting \
            with "vault: ".

            EXAMPLE:
              export VAULT_PATH=/tmp/demo.vault VAULT_PASSPHRASE='correct horse'
              vault init
              printf '%s\\n' 's3cr3t' | vault set api.example.com alice
              vault get api.example.com alice
              vault list
            """,
        subcommands: [
            InitCommand.self, SetCommand.self, AddCommand.self, UpdateCommand.self,
            GetCommand.self, DeleteCommand.self, ListCommand.self, PasswdCommand.self, RekeyCommand.self,
        ]
    )

    /// Replaces argument-parser's `main` to give the documented exit statuses (2 for
    /// usage rather than 64) and one-line error messages, and to harden the process
    /// before anything else happens.
    static func main() {
        do {
            try Hardening.disableCoreDumps()
        } catch {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForParser(error)
        }
        do {
            try command.run()
        } catch let error as CLIError {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        } catch let error as VaultError {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        } catch {
            // Help requested by running `vault` alone, or a ValidationError from run().
            exitForParser(error)
        }
    }

    /// Help goes to standard output with status 0; any other parser error becomes one
    /// `vault: ` line and status 2.
    private static func exitForParser(_ error: any Error) -> Never {
        if exitCode(for: error) == .success {
            print(fullMessage(for: error))
            exitProcess(ExitStatus.success)
        }
        let full = fullMessage(for: error)
        var text = message(for: error)
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        if let first = text.first { text = first.lowercased() + text.dropFirst() }
        let lines = full.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        if let hint = lines.last(where: { $0.hasPrefix("See '") }) {
            text += " (" + hint.replacingOccurrences(of: " for more information.", with: "").replacingOccurrences(of: "See '", with: "see '") + ")"
        }
        Failure.terminate(message: text, status: ExitStatus.usage)
    }
}
