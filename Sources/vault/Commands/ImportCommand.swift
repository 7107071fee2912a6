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

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the logins of another password manager's export, or of a VaultKit export.",
        discussion: """
            Reads FILE (- for standard input) in one of these formats:
              json       VaultKit's own export (vault export --format json)
              bitwarden  Bitwarden's unencrypted JSON export
              keepassxc  KeePassXC's CSV export
              chrome     Chrome's (or any Chromium browser's) password CSV
              firefox    Firefox's password CSV

            For the other managers' formats the service is the host of the login's URL \
            (else its title or name), the account its username, the label its title or \
            name, the secret its password; entries without a password, and Bitwarden \
            items that are not logins, are skipped. docs/CLI.md has the full mapping.

            The import is one transaction: every item is written, or none. An item that \
            already exists (in the vault, or twice in the file) stops the import with \
            status 45, unless --overwrite is given. Names that are not valid UTF-8 are \
            refused. Prints how many items were imported and skipped.

            EXAMPLES:
              vault import --format bitwarden bitwarden_export.json && shred -u bitwarden_export.json
              vault import --format chrome 'Chrome Passwords.csv'
              vault export --format json --plaintext | vault import --vault new.vault --format json -
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, bitwarden, keepassxc, chrome, firefox

        /// The library's reader of this format.
        var transferFormat: TransferFormat {
            switch self {
            case .json: .vaultKitJSON
            case .bitwarden: .bitwarden
            case .keepassxc: .keePassXC
            case .chrome: .chromeCSV
            case .firefox: .firefoxCSV
            }
        }
    }

    @OptionGroup var options: VaultOptions

    @Option(help: "The file's format: json, bitwarden, keepassxc, chrome or firefox.")
    var format: Format

    @Flag(help: "Replace items that already exist instead of stopping.")
    var overwrite = false

    @Argument(help: ArgumentHelp("The export file, or - for standard input.", valueName: "file"))
    var file: String

    /// The largest file read: far above any real export.
    static let maximumByteCount = 256 * 1024 * 1024

    func run() throws {
        // The file is read and checked before the vault is unlocked, so a bad file
        // costs no passphrase prompt.
        let contents = try parse(try read())
        let vault = try options.openVault()
        defer { vault.close() }
        var replaced = 0
        for item in contents.items where try vault.contains(service: item.service, account: item.account) {
            guard overwrite else { throw CLIError.itemExists(service: item.service, account: item.account) }
            replaced += 1
        }
        // One transaction. An item another process adds after the check above makes
        // `add` fail (status 45) and nothing is written.
        try vault.batch { batch in
            for item in contents.items {
                if overwrite {
                    try batch.set(item.secret, service: item.service, account: item.account, label: item.label, generic: item.generic)
                } else {
                    try batch.add(item.secret, service: item.service, account: item.account, label: item.label, generic: item.generic)
                }
            }
        }
        let summary = "imported \(contents.items.count) item\(contents.items.count == 1 ? "" : "s") (\(replaced) replaced)"
            + ", skipped \(contents.skipped) entr\(contents.skipped == 1 ? "y" : "ies") without a password or not a login\n"
        Output.write(summary, to: STDOUT_FILENO)
    }

    private func read() throws(CLIError) -> SecretBytes {
        // Typed in, the export's passwords would be echoed on the screen.
        if file == "-" && Terminal.standardInputIsTerminal {
            throw .usage("standard input is a terminal; pipe the export in or name its file")
        }
        let fd = file == "-" ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(what: file, errno: errno) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var contents = SecretBytes(reservingCapacity: 64 * 1024)
        do throws(CLIError) {
            guard try contents.readAll(from: fd, limit: Self.maximumByteCount) else { throw CLIError.cannotRead(what: file, errno: EFBIG) }
        } catch {
            if case .cannotRead(_, let code) = error { throw .cannotRead(what: file == "-" ? "standard input" : file, errno: code) }
            throw error
        }
        return contents
    }

    /// The file's items, refusing one that appears twice unless --overwrite (then the last wins).
    private func parse(_ data: SecretBytes) throws -> ImportContents {
        var contents = try format.transferFormat.read(data)
        var seen: [ItemKey: Int] = [:]
        var unique: [ImportedItem] = []
        for item in contents.items {
            let key = ItemKey(service: item.service, account: item.account)
            if let earlier = seen[key] {
                guard overwrite else { throw CLIError.itemExists(service: item.service, account: item.account) }
                unique[earlier] = item
            } else {
                seen[key] = unique.count
                unique.append(item)
            }
        }
        contents.items = unique
        return contents
    }

    private struct ItemKey: Hashable {
        var service: String
        var account: String
    }
}
