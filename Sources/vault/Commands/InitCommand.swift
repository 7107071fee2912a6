import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new, empty vault.",
        discussion: """
            Asks for the passphrase twice on the terminal, or takes it from \
            $VAULT_PASSPHRASE_FILE or $VAULT_PASSPHRASE. Never overwrites an existing file.

            With --key-file (or $VAULT_KEY_FILE) the vault is unlocked by a raw 32-byte \
            key instead: if the key file does not exist, a new random key is written to \
            it (mode 0600); if it exists, its key is used.

            --kdf sets how hard the passphrase is to guess (Argon2id cost, recorded in \
            the vault, so opening needs no option). --kdf-opslimit and --kdf-memlimit set \
            the cost exactly; the smallest values (1 and 8192) are for tests only.

            EXAMPLES:
              vault init --vault ~/secrets.vault
              VAULT_PASSPHRASE_FILE=~/.vault-pass vault init --kdf sensitive
              vault init --vault /srv/app.vault --key-file /etc/app/vault.key
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var kdf: KDFOptions

    func validate() throws {
        if options.keyFileOption != nil && kdf.isGiven {
            throw ValidationError("--kdf options apply to passphrases, not to --key-file")
        }
    }

    func run() throws {
        let location = try options.location()
        // Before creating a key file or asking for a passphrase.
        if let path = location.filePath, access(path, F_OK) == 0 { throw VaultError.vaultAlreadyExists(path: path) }
        if let keyFile = options.keyFile {
            if kdf.isGiven { throw CLIError.usage("--kdf options apply to passphrases, not to a key file ($VAULT_KEY_FILE)") }
            try createWithKey(at: location, keyFile: keyFile)
        } else {
            let parameters = try kdf.parameters()
            let passphrase = try Credentials.newPassphrase(forCreating: location.displayName)
            switch location {
            case .file(let path): try Vault.create(at: path, passphrase: passphrase, kdf: parameters).close()
            case .engine(let engine, _): try Vault.create(in: engine.storage(busyTimeout: Vault.defaultBusyTimeout), passphrase: passphrase, kdf: parameters).close()
            }
        }
    }

    private func createWithKey(at location: VaultLocation, keyFile: String) throws {
        let creatingKeyFile = access(keyFile, F_OK) != 0 && errno == ENOENT
        let key = creatingKeyFile ? try Credentials.createKeyFile(at: keyFile) : try Credentials.key(fromFile: keyFile)
        do {
            switch location {
            case .file(let path): try Vault.create(at: path, key: key).close()
            case .engine(let engine, _): try Vault.create(in: engine.storage(busyTimeout: Vault.defaultBusyTimeout), key: key).close()
            }
        } catch {
            // A key for a vault that does not exist would only confuse the next attempt.
            if creatingKeyFile { unlink(keyFile) }
            throw error
        }
    }
}
