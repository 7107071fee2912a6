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
import VaultTransfer

/// What `vault set`, `vault add` and `vault update` share: the item, its attributes,
/// and reading the secret.
struct WriteArguments: ParsableArguments {
    @OptionGroup var item: ItemArguments

    @Option(help: ArgumentHelp("Application data stored (encrypted) with the item; kept when omitted on an update.", valueName: "text"))
    var generic: String?

    @Option(help: ArgumentHelp("A name for people; kept when omitted on an update.", valueName: "text"))
    var label: String?

    @Flag(name: .customLong("no-history"), help: "Keep no version of what this write replaces (for a token refreshed every hour, whose history nobody wants).")
    var noHistory = false

    enum Mode { case set, add, update }

    func write(_ mode: Mode, options: VaultOptions) throws {
        if item.namesFile == "-" && !Terminal.standardInputIsTerminal {
            throw CLIError.usage("--names-from - would read standard input, which carries the secret here; give a file")
        }
        let vault = try options.openItems()
        defer { vault.close() }
        try item.run { service, account in
            try Self.write(mode, to: vault, service: service, account: account, label: label, generic: generic, keepHistory: !noHistory)
        }
    }

    /// Reads the secret and writes the item (also ``FastPath``'s `vault set`).
    static func write(_ mode: Mode, to vault: any ItemStore, service: String, account: String, label: String?, generic: String?, keepHistory: Bool = true) throws {
        // Fail before the secret is typed or read, not after; the write itself
        // still checks atomically.
        let exists = try vault.contains(service: service, account: account)
        if mode == .add && exists { throw VaultError.duplicateItem }
        if mode == .update && !exists { throw VaultError.itemNotFound }
        let secret = try SecretInput.read(service: service, account: account)
        let generic = generic.map { Data($0.utf8) }
        switch mode {
        case .set: try vault.set(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
        case .add: try vault.add(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
        case .update: try vault.update(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
        }
    }
}

/// Where a new secret comes from.
enum SecretInput {
    /// The most a secret may hold, as VaultKit enforces.
    static let maximumByteCount = 64 * 1024 * 1024

    /// All of standard input minus one trailing newline, or, when standard input is a
    /// terminal, a no-echo prompt answered twice.
    static func read(service: String, account: String) throws(CLIError) -> SecretBytes {
        if Terminal.standardInputIsTerminal {
            let prompt = "Secret for service \(Escaping.quoted(service)), account \(Escaping.quoted(account)): "
            guard let typed = try Terminal.readNewSecret(prompt: prompt, confirmation: "Repeat the secret: ", noun: "secret", what: "secrets") else {
                throw .inputEnded(noun: "secret")
            }
            return typed
        }
        var input = SecretBytes(reservingCapacity: 4096)
        guard try input.readAll(from: STDIN_FILENO, limit: maximumByteCount + 1) else { throw .secretTooLarge }
        if input.lastByte == UInt8(ascii: "\n") { input.removeLast() }
        guard input.count <= maximumByteCount else { throw .secretTooLarge }
        return input
    }
}
