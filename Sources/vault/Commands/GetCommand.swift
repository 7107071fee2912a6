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

            --version N reads version N of the item's history instead of the current \
            item ('vault history' lists the numbers), with any of the forms above.

            Exits with status 44 if the item does not exist, or has no version N.

            EXAMPLES:
              vault get api.example.com alice | sed 's/^/Authorization: Bearer /' | curl -H @- https://api.example.com/
              vault get api.example.com alice --json | jq -r .modified
              vault get api.example.com alice --version 3
            """
    )

    @OptionGroup var options: VaultOptions
    @OptionGroup var item: ItemArguments

    @OptionGroup var format: SecretFormatOptions

    @Option(name: .customLong("version"), help: ArgumentHelp("Read this version of the item's history instead of the current item.", valueName: "n"))
    var versionNumber: UInt64?

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        if let versionNumber {
            let (found, secret) = try item.run { (service, account) in
                try HistoryNames.naming(service: service, account: account, version: versionNumber) {
                    try vault.itemWithSecret(service: service, account: account, version: versionNumber)
                }
            }
            if format.generic {
                var output = SecretBytes()
                if let data = found.generic { output.append(contentsOf: data) }
                output.append(UInt8(ascii: "\n"))
                try Output.writeStandardOutput(output)
            } else if format.json {
                try Output.writeStandardOutput(try Self.json(of: found, secret: secret))
            } else {
                try Output.writeSecretLine(secret)
            }
            return
        }
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
                return try Self.json(of: attributes, secret: secret)
            }
            output.append(UInt8(ascii: "\n"))
            return output
        }
        try Output.writeStandardOutput(output)
    }

    /// `--json`: the item's attributes and its secret as one object and a newline.
    private static func json(of item: VaultItem, secret: SecretBytes) throws -> SecretBytes {
        var writer = JSONWriter()
        writer.beginObject()
        writer.attributes(of: item)
        writer.key("secret")
        try secret.withUnsafeBytes { bytes in
            guard UTF8Validation.isValid(bytes) else { throw CLIError.notUTF8ForJSON }
            writer.utf8String(bytes)
        }
        writer.endObject()
        writer.buffer.append(UInt8(ascii: "\n"))
        return writer.buffer
    }

    /// The plain `vault get`: the secret's bytes and one newline (also ``FastPath``'s).
    static func writeSecret(of vault: any ItemStore, service: String, account: String) throws {
        try Output.writeSecretLine(try vault.secret(service: service, account: account))
    }
}
