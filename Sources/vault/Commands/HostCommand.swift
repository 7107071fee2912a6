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
import VaultTransfer

/// `vault host`: host key wraps, so each host unlocks the vault with its own key pair
/// instead of a shared passphrase (docs/FORMAT.md section 12).
struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Let other hosts unlock the vault with their own key pairs.",
        discussion: """
            Each host makes its own X25519 key pair (vault host keygen); whoever has the \
            vault's passphrase or key adds the host's public key (vault host add), which \
            prints the vault's identity. The host pins that identity (vault host pin) and \
            then unlocks with --host-key FILE or $VAULT_HOST_KEY_FILE: it opens only a vault \
            signed by the identity it pinned, never one someone else built for its public \
            key. Removing a host re-keys the vault, so its key opens nothing the vault \
            still holds.

            EXAMPLE:
              web-2$ vault host keygen --out /etc/app/host.key      # prints the public key
              web-1$ vault host add web-2 'BASE64PUBLICKEY='        # prints vkid1:...
              web-2$ vault host pin --host-key /etc/app/host.key vkid1:...
              web-2$ vault get api.example.com alice --host-key /etc/app/host.key
              web-1$ vault host remove web-2

            Hosts enrolled before vault identities existed: run 'vault host identity' once \
            with the passphrase or key, and 'vault host pin' on each host.
            """,
        subcommands: [
            HostKeygenCommand.self, HostAddCommand.self, HostRemoveCommand.self, HostListCommand.self,
            HostIdentityCommand.self, HostPinCommand.self,
        ]
    )
}

struct HostKeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make this host's key pair: the private key into a new file (mode 0600), the public key on standard output."
    )

    @Option(help: ArgumentHelp("The new private key file; nothing may exist there yet.", valueName: "path"))
    var out: String

    func validate() throws {
        if out.isEmpty { throw ValidationError("--out needs a non-empty path") }
    }

    func run() throws {
        let host = HostKeyPair.generate()
        do {
            try host.writePrivateKey(toNewFile: out)
        } catch {
            guard error.code == .vaultAlreadyExists else { throw error }
            throw CLIError.cannotWrite(what: "the host key file \(out)", errno: EEXIST)
        }
        var output = SecretBytes()
        output.append(host.publicKey.base64 + "\n")
        try Output.writeStandardOutput(output)
    }
}

struct HostAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Let the host with this public key unlock the vault; prints the vault identity the host pins.",
        discussion: """
            Needs the passphrase or key: the host wraps are signed by the vault's identity, \
            created now if the vault has none. Give the printed fingerprint to the host's \
            'vault host pin' over a channel you trust.
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "A name for the host, shown by 'vault host list' and used by 'vault host remove'.")
    var name: String

    @Argument(help: "The host's public key, as 'vault host keygen' printed it (44 characters of base64).")
    var publicKey: String?

    @Option(name: .customLong("public-key-file"), help: ArgumentHelp("Read the public key from this file instead.", valueName: "path"))
    var publicKeyFile: String?

    func validate() throws {
        if (publicKey == nil) == (publicKeyFile == nil) { throw ValidationError("give the public key either as an argument or with --public-key-file") }
    }

    func run() throws {
        let key: HostPublicKey
        if let publicKeyFile {
            guard let data = FileManager.default.contents(atPath: publicKeyFile), let text = String(data: data, encoding: .utf8) else {
                throw CLIError.cannotRead(what: "the public key file \(publicKeyFile)", errno: errno == 0 ? EIO : errno)
            }
            key = try HostPublicKey(base64: text)
        } else {
            key = try HostPublicKey(base64: publicKey ?? "")
        }
        let vault = try options.openVault()
        defer { vault.close() }
        try vault.addHost(key, name: name)
        try HostIdentityCommand.writeFingerprint(try vault.identity())
    }
}

struct HostRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Stop a host from unlocking the vault, and re-key it.",
        discussion: """
            A new master key replaces the old one and every item is re-encrypted, so the \
            removed host's key opens nothing the vault holds from now on. Needs the \
            passphrase or key file: a host key cannot rewrap them.
            """
    )

    @OptionGroup var options: VaultOptions

    @Argument(help: "The host's name, as 'vault host list' shows it.")
    var name: String

    func run() throws {
        let vault = try options.openVault()
        defer { vault.close() }
        try vault.removeHost(name)
    }
}

struct HostListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the hosts that can unlock the vault: NAME<TAB>FINGERPRINT<TAB>PUBLIC KEY per line."
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let vault = try options.openVault()
        defer { vault.close() }
        var output = SecretBytes()
        for host in try vault.hosts() {
            output.append(Escaping.escaped(host.name) + "\t" + host.fingerprint + "\t" + host.publicKey.base64 + "\n")
        }
        try Output.writeStandardOutput(output)
    }
}

struct HostIdentityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Print the vault's identity (vkid1:...), which each host pins; create it if the vault has none.",
        discussion: """
            Creating it needs the passphrase or key, and signs the current host wraps: \
            run it once for a vault whose hosts were added before vault identities, then \
            'vault host pin' on each host.
            """
    )

    @OptionGroup var options: VaultOptions

    func run() throws {
        let vault = try options.openVault()
        defer { vault.close() }
        try Self.writeFingerprint(try vault.identity())
    }

    static func writeFingerprint(_ identity: VaultIdentity) throws {
        var output = SecretBytes()
        output.append(identity.fingerprint + "\n")
        try Output.writeStandardOutput(output)
    }
}

struct HostPinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "On a host: trust vaults with this identity when unlocking with this host key.",
        discussion: """
            Adds the fingerprint to KEY.pin beside the host key file (mode 0600); one key \
            may pin several vaults' identities. Take the fingerprint from 'vault host add' \
            or 'vault host identity' run where the passphrase or key is, over a channel \
            you trust: whoever chooses it chooses which vault this host trusts.
            """
    )

    @Option(
        name: .customLong("host-key"),
        help: ArgumentHelp("The host's private key file. Default: $VAULT_HOST_KEY_FILE.", valueName: "path")
    )
    var hostKeyFileOption: String?

    @Argument(help: "The vault identity, as 'vault host identity' printed it (vkid1:...).")
    var fingerprint: String

    func validate() throws {
        if hostKeyFileOption?.isEmpty == true { throw ValidationError("--host-key needs a non-empty path") }
    }

    func run() throws {
        guard let keyFile = hostKeyFileOption ?? Environment.value("VAULT_HOST_KEY_FILE") else {
            throw CLIError.usage("vault host pin needs --host-key or $VAULT_HOST_KEY_FILE")
        }
        let identity = try VaultIdentity(fingerprint: fingerprint)
        // The key must be one: the pins belong to it, and get its checks.
        _ = try Credentials.hostKey(fromFile: keyFile)
        try HostPins.add(identity, forKeyFile: keyFile)
    }
}
