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

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every item, with its secret, as plain-text JSON.",
        discussion: """
            The export holds every secret unencrypted, so it needs --plaintext, whether \
            it goes to a file, a pipe or a terminal. --output creates a new file readable \
            only by you (mode 0600); it never overwrites or follows a symbolic link.

            The format is VaultKit's own JSON, read back by vault import --format json: \
            {"format":"vaultkit-export","version":1,"items":[...]}, each item as vault get \
            --json writes it. Secrets and generic data that are not UTF-8 are written in \
            base64 (secretBase64, genericBase64).

            EXAMPLES:
              vault export --format json --plaintext --output backup.json
              vault export --format json --plaintext | vault import --vault new.vault --format json -
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json
    }

    @OptionGroup var options: VaultOptions

    @Option(help: "The export's format: json (VaultKit's own).")
    var format: Format

    @Flag(help: "Acknowledge that the export holds every secret in plain text.")
    var plaintext = false

    @Option(help: ArgumentHelp("Write to this new file (mode 0600) instead of standard output.", valueName: "path"))
    var output: String?

    func validate() throws {
        if !plaintext {
            throw ValidationError("the export holds every secret in plain text; add --plaintext to confirm")
        }
        if output?.isEmpty == true { throw ValidationError("--output needs a non-empty path") }
    }

    func run() throws {
        // Before the vault is unlocked, so a file in the way costs no passphrase.
        let fd = try output.map { (path) throws(CLIError) -> Int32 in
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .cannotWrite(what: path, errno: errno) }
            return fd
        }
        do {
            let vault = try options.openVault()
            defer { vault.close() }
            let json = try VaultKitJSONFormat.export(vault)
            guard let fd, let output else { return try Output.writeStandardOutput(json) }
            try json.withUnsafeBytes { (bytes) throws(CLIError) in try Output.write(bytes, to: fd) }
            guard fsync(fd) == 0 else { throw CLIError.cannotWrite(what: output, errno: errno) }
            close(fd)
        } catch {
            // A partial export is removed, never left behind.
            if let fd, let output {
                close(fd)
                unlink(output)
            }
            if case CLIError.cannotWrite(_, let code) = error, let output {
                throw CLIError.cannotWrite(what: output, errno: code)
            }
            throw error
        }
    }
}
