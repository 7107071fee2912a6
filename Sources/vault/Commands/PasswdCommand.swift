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
            with a key file becomes a passphrase vault.

            The vault is re-keyed at the same time: a new master key, every item \
            re-sealed (as 'vault rekey'), so that whoever has the old passphrase and an \
            old copy of the file cannot read what is written from now on. Both happen \
            in one transaction: if the command fails, the old passphrase still opens the \
            vault; if it succeeds, only the new one does. That costs time in \
            proportion to the vault's size; --rewrap-only skips it and only re-wraps \
            the master key (instant), for a passphrase changed on schedule rather than \
            because it leaked.

            --kdf (and the advanced --kdf-opslimit/--kdf-memlimit) set the Argon2id cost \
            of the new passphrase; without them the vault keeps its current cost \
            (moderate for a vault that had a key file).

            EXAMPLE:
              VAULT_PASSPHRASE='old' VAULT_NEW_PASSPHRASE='new' vault passwd
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var kdf: KDFOptions

    @Flag(name: .customLong("rewrap-only"), help: "Only re-wrap the master key under the new passphrase; do not re-key.")
    var rewrapOnly = false

    func run() throws {
        let requested = kdf.isGiven ? try kdf.parameters() : nil
        let vault = try options.openVault()
        defer { vault.close() }
        let parameters = try requested ?? vault.kdfParameters ?? .moderate
        let passphrase = try Credentials.replacementPassphrase(for: vault.location.description)
        // One transaction either way: a failure (a full disk, a file size limit) leaves
        // the old passphrase in force, and success leaves only the new one.
        if rewrapOnly {
            try vault.changePassphrase(to: passphrase, kdf: parameters)
        } else {
            try vault.rekey(changingPassphraseTo: passphrase, kdf: parameters)
        }
    }
}
