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
import VaultAgent
import VaultKit

struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock a vault in the agent, so later commands skip the passphrase.",
        discussion: """
            Reads the passphrase or key as every command does, starts the agent if it \
            is not running, and hands it the passphrase or key once, over its socket; \
            the agent derives the keys and holds the vault until 'vault lock', the idle \
            timeout, 'vault agent stop', or until the file is replaced or its passphrase \
            changed by another process. \(HelpText.agentPasswords) Meanwhile get, set, add, update, delete, list and \
            verify for this vault run in the agent, with the same output.

            Any process of your user can use an unlocked vault, as with ssh-agent: lock \
            it when you step away. See docs/AGENT.md.

            EXAMPLE:
              vault unlock --idle-timeout 600 && vault get api.example.com alice
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Lock the vault after this many seconds without a request; 0 never does.", valueName: "seconds")
    )
    var idleTimeout: UInt64 = 900

    func run() throws {
        // The agent's protocol carries a passphrase or key, not a host key pair (yet).
        if options.hostKeyFileOption != nil { throw CLIError.usage("vault unlock cannot use --host-key; the agent takes a passphrase or --key-file") }
        let location = try options.location()
        // What the agent opens: an absolute path, or the URL as given (TLS options and all).
        let path: String, opened: String
        switch location {
        case .file(let given):
            if access(given, F_OK) != 0 && errno == ENOENT { throw VaultError.vaultNotFound(path: given) }
            path = given
            opened = Paths.absolute(given)
        case .engine(let engineLocation, let url):
            path = engineLocation.description
            opened = url
        }
        let socket = AgentSocket.path()
        try AgentLauncher.ensureRunning(socketPath: socket)
        let credential: SecretBytes, isKey: Bool
        if let keyFile = options.keyFile {
            let key = try Credentials.key(fromFile: keyFile)
            credential = key.withUnsafeBytes { bytes in
                SecretBytes(count: bytes.count) { $0.baseAddress?.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            }
            isKey = true
        } else {
            credential = try Credentials.passphrase(prompt: "Passphrase for \(location.displayName): ")
            isKey = false
        }
        guard let connection = try AgentConnection(socketPath: socket) else { throw AgentError.notRunning(socket: socket) }
        do {
            _ = try connection.expectOK(.unlock(path: opened, credential: credential, isKey: isKey, idleTimeoutSeconds: idleTimeout))
        } catch let error as VaultError {
            throw WireVaultError.respelled(error, from: opened, to: path)
        }
    }
}
