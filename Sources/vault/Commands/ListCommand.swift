import ArgumentParser
import VaultKit
import VaultTransfer

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List items (never their secrets).",
        discussion: """
            Writes one SERVICE<TAB>ACCOUNT line per item, sorted by service then account \
            (bytewise, as LC_ALL=C sort does). Names are escaped so each item stays one \
            line: a backslash is written \\\\, a tab \\t, a newline \\n, a carriage return \
            \\r, any other control character \\xHH.

            --json writes an array of objects with service, account, label, generic, \
            created and modified (ISO 8601, UTC), unescaped, without secrets.

            EXAMPLES:
              vault list
              vault list --service api.example.com | cut -f2
              vault list --json | jq -r '.[].service' | sort -u
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(help: ArgumentHelp("Only the items of this service.", valueName: "service"))
    var service: String?

    @Flag(help: "Write a JSON array of objects.")
    var json = false

    func validate() throws {
        if service?.isEmpty == true { throw ValidationError("--service needs a non-empty name") }
    }

    func run() throws {
        let vault = try options.openItems()
        defer { vault.close() }
        // Already in the documented order: by the UTF-8 bytes of service, then account.
        let items = try vault.items(service: service)
        if json {
            var writer = JSONWriter()
            writer.beginArray()
            for item in items {
                writer.beginObject()
                writer.attributes(of: item)
                writer.endObject()
            }
            writer.endArray()
            writer.buffer.append(UInt8(ascii: "\n"))
            try Output.writeStandardOutput(writer.buffer)
        } else {
            var output = SecretBytes()
            for item in items {
                // Piece by piece: joining the line first built a new String per item.
                output.append(Escaping.escaped(item.service))
                output.append(UInt8(ascii: "\t"))
                output.append(Escaping.escaped(item.account))
                output.append(UInt8(ascii: "\n"))
            }
            try Output.writeStandardOutput(output)
        }
    }
}
