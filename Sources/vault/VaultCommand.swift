import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
            else $VAULT_URL, else ${XDG_DATA_HOME:-$HOME/.local/share}/vault/default.vault. \
            \(HelpText.engineLocations)

            UNLOCKING: --key-file PATH or $VAULT_KEY_FILE (a raw 32-byte key), else the \
            first line of $VAULT_PASSPHRASE_FILE, else $VAULT_PASSPHRASE, else a no-echo \
            prompt on the terminal. Without any of them (no terminal, as in CI) the \
            command fails at once instead of waiting.

            WRITER: every write records who made it: $VAULT_WRITER (for example \
            ci@runner-7), else user@machine; a host key records its host's name. See \
            'vault history --help'.

            HOST KEYS: --host-key PATH or $VAULT_HOST_KEY_FILE unlocks with this host's own \
            key pair instead, once another host added it (see 'vault host --help').

            SECRETS are read from standard input when it is not a terminal (all of it, \
            minus one trailing newline), else prompted for without echo. No option \
            takes a secret: the command line is visible to every user of the machine.

            EXIT STATUS: 0 success, 1 error, 2 usage error, 44 item (or version) not \
            found, 45 item already exists. Errors are one line on standard error starting \
            with "vault: ".

            EXAMPLE:
              export VAULT_PATH=/tmp/demo.vault VAULT_PASSPHRASE='correct horse'
              vault init
              printf '%s\\n' 's3cr3t' | vault set api.example.com alice
              vault get api.example.com alice
              vault list
            """,
        version: VersionCommand.line,
        subcommands: [
            InitCommand.self, SetCommand.self, AddCommand.self, UpdateCommand.self,
            GetCommand.self, DeleteCommand.self, ListCommand.self,
            HistoryCommand.self, RestoreCommand.self, LogCommand.self, PurgeHistoryCommand.self, ConfigCommand.self,
            VerifyCommand.self, PasswdCommand.self, RekeyCommand.self,
            UpgradeCommand.self, BackupCommand.self,
            RunCommand.self, ReadCommand.self, GenerateCommand.self, GitCredentialCommand.self, DockerCredentialCommand.self,
            ImportCommand.self, ExportCommand.self,
            UnlockCommand.self, LockCommand.self, AgentCommand.self, SecretServiceCommand.self,
            HostCommand.self,
            VersionCommand.self,
        ]
    )
}
