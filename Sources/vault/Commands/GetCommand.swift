import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultAgent
import VaultKit
import VaultTransfer

struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write an item's secret to standard output.",
        discussion: """
            Writes the secret's exact bytes followed by one newline, and nothing else. \
            Hand it to another program on its standard input or in its environment \
            ('vault run'), never as an argument: every user of the machine can read a \
            process's arguments.

            --json writes one JSON object instead: service, account, label, generic, \
            created and modified (ISO 8601, UTC), secret. A secret that is not UTF-8 text \
            cannot be written as JSON (status 1). Generic data that is not UTF-8 is null \
            in "generic" and base64 in an extra "genericBase64".

            --generic writes only the item's generic data, followed by one newline.

            Exits with status 44 if the item does not exist.

            EXAMPLES:
              vault get api.example.com alice | sed 's/^/Authorization: Bearer /' | curl -H @- https://api.example.com/
              vault get api.example.com alice --json | jq -r .modified
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var item: ItemArguments

    @OptionGroup var format: SecretFormatOptions

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        if !format.generic && !format.json {
            try item.run { (service, account) in try Self.writeSecret(of: vault, service: service, account: account) }
            return
        }
        let output = try item.run { (service, account) throws -> SecretBytes in
            var output = SecretBytes()
            if format.generic {
                let attributes = try vault.item(service: service, account: account)
                if let data = attributes.generic { output.append(contentsOf: data) }
            } else if format.json {
                let secret = try vault.secret(service: service, account: account)
                let attributes = try vault.item(service: service, account: account)
                var writer = JSONWriter()
                writer.beginObject()
                writer.attributes(of: attributes)
                writer.key("secret")
                try secret.withUnsafeBytes { bytes in
                    guard UTF8Validation.isValid(bytes) else { throw CLIError.notUTF8ForJSON }
                    writer.utf8String(bytes)
                }
                writer.endObject()
                output.append(contentsOf: writer.buffer)
            }
            output.append(UInt8(ascii: "\n"))
            return output
        }
        try Output.writeStandardOutput(output)
    }

    /// The plain `vault get`: the secret's bytes and one newline (also ``FastPath``'s).
    static func writeSecret(of vault: any ItemStore, service: String, account: String) throws {
        try Output.writeSecretLine(try vault.secret(service: service, account: account))
    }
}
