import ArgumentParser
import VaultKit

struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the vault's passphrase.",
        discussion: """
            Opens the vault as usual (current passphrase, or --key-file), then takes the \
            new passphrase from the first line of $VAULT_NEW_PASSPHRASE_FILE, else \
            $VAULT_NEW_PASSPHRASE, else a no-echo prompt answered twice. A vault opened \
            with a key file becomes a passphrase vault. Only the wrapped master key is \
            rewritten, so this is instant whatever the vault's size.

            --kdf (and the advanced --kdf-opslimit/--kdf-memlimit) set the Argon2id cost \
            of the new passphrase; the default is moderate.

            EXAMPLE:
              VAULT_PASSPHRASE='old' VAULT_NEW_PASSPHRASE='new' vault passwd
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var kdf: KDFOptions

    func run() throws {
        let parameters = try kdf.parameters()
        let vault = try options.openVault()
        defer { vault.close() }
        let passphrase = try Credentials.replacementPassphrase(for: vault.path)
        try vault.changePassphrase(to: passphrase, kdf: parameters)
    }
}
