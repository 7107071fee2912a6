import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultAgent
import VaultKit
import VaultSecretService

struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Serve the freedesktop Secret Service (org.freedesktop.secrets) from a vault.",
        discussion: """
            Runs in the foreground on the session bus named by DBUS_SESSION_BUS_ADDRESS and \
            owns org.freedesktop.secrets, so that secret-tool, Python keyring, \
            git-credential-libsecret, docker-credential-secretservice and every other \
            libsecret or SecretStorage program store into the vault, with no desktop and \
            no prompt. The vault is opened as every command opens it: through the agent \
            when it holds the vault, else with --key-file, --host-key or the passphrase \
            (VAULT_PASSPHRASE_FILE). It stops when the bus ends, or on SIGTERM or Ctrl-C.

            After a client's Lock, its Unlock opens the vault at once through the agent \
            or a key file; else it gets a prompt, answered by the passphrase typed on this \
            terminal or by 'vault unlock' in another one, and dismissed after \
            --prompt-timeout seconds.

            Any program of the user on the session bus can read every item while this \
            runs, as with GNOME Keyring; callers of other users are refused. Items keep \
            their attributes in the vault; secret-tool's 'service' and 'username' become \
            the item's names, so 'vault get SERVICE USERNAME' finds them (docs/CLI.md).

            EXAMPLE:
              dbus-run-session -- sh -c 'vault secret-service & sleep 1; secret-tool store --label=x service api username alice'
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(name: .customLong("prompt-timeout"), help: ArgumentHelp(
        "Seconds an Unlock prompt waits for a passphrase on this terminal or for 'vault unlock' elsewhere before it is dismissed (default 120).",
        valueName: "seconds"))
    var promptTimeout: Int = 120

    func validate() throws {
        guard (1...86_400).contains(promptTimeout) else { throw ValidationError("--prompt-timeout must be 1 to 86400 seconds") }
    }

    func run() throws {
        let store = SecretServiceItemStore(try openItems(), options: options)
        defer { store.lock() }
        try SecretServiceProvider(store: store, promptTimeout: .seconds(promptTimeout)).run()
    }
}

extension SecretServiceCommand {
    /// The agent's vault when it holds it, else the vault opened here (asking for the
    /// passphrase now, before serving). Unlike the other commands, once serving through
    /// the agent it never falls back to opening the vault itself when the agent forgets it:
    /// that could ask on the terminal while every D-Bus client waits.
    func openItems() throws -> any ItemStore {
        try AgentVault.ifHeld(options.location()) { throw AgentForgotVault() } ?? options.openVault()
    }
}

/// The agent no longer holds the vault this provider serves through it (`vault lock`, its
/// idle timeout): each call gets this as its D-Bus error until `vault unlock`.
struct AgentForgotVault: Error, CustomStringConvertible {
    var description: String { "the agent no longer holds the vault; run 'vault unlock'" }
}

/// The Secret Service locked the vault (Lock) and nothing has unlocked it since.
struct SecretServiceLocked: Error, CustomStringConvertible {
    var description: String { "the vault is locked; call Unlock" }
}

/// The vault, here or in the agent, as the provider's store. Lock closes it (a vault
/// opened here wipes its keys); Unlock opens it again through the agent or with the key
/// file or host key it was opened with, else with a passphrase typed at the prompt.
final class SecretServiceItemStore: SecretServiceStore {
    private var vault: (any ItemStore)?
    private let options: VaultOptions

    init(_ vault: any ItemStore, options: VaultOptions) {
        self.vault = vault
        self.options = options
    }

    private func opened() throws -> any ItemStore {
        guard let vault else { throw SecretServiceLocked() }
        return vault
    }

    func items() throws -> [VaultItem] { try opened().items(service: nil) }
    func secret(service: String, account: String) throws -> SecretBytes { try opened().secret(service: service, account: account) }
    func set(_ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?) throws {
        try opened().set(secret, service: service, account: account, label: label, generic: generic, keepHistory: true)
    }
    func delete(service: String, account: String) throws -> Bool { try opened().delete(service: service, account: account, keepHistory: true) }

    func lock() {
        vault?.close()
        vault = nil
    }

    func unlockWithoutPrompt() throws -> Bool {
        if vault != nil { return true }
        let location = try options.location()
        if let agent = AgentVault.ifHeld(location, openHere: { throw AgentForgotVault() }) {
            vault = agent
        } else if options.keyFile != nil || options.hostKeyFile != nil {
            vault = try options.openVault()
        }
        return vault != nil
    }

    func unlock(passphrase: SecretBytes) throws {
        let opened: Vault
        switch try options.location() {
        case .file(let path):
            opened = try Vault.open(at: path, passphrase: passphrase)
        case .engine(let location, _):
            opened = try Vault.open(location.storage(busyTimeout: Vault.defaultBusyTimeout), passphrase: passphrase)
        }
        do {
            try VaultOptions.rollbackGuard(opened, accepting: options.acceptRollback)
        } catch {
            opened.close()
            throw error
        }
        vault = opened
    }
}
