#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit
import VaultTransfer

/// How `vault history` and `vault log` write what they list: tab-separated lines with
/// names escaped as `vault list` escapes them, or JSON. Never a secret: neither a
/// ``VaultItemVersion`` nor a ``VaultChange`` holds one.
enum HistoryOutput {
    static func lines(_ versions: [VaultItemVersion]) -> SecretBytes {
        var output = SecretBytes()
        for version in versions {
            output.append("\(version.number)\t\(Timestamp.iso8601(version.item.modified))\t\(version.secretSize)\t")
            output.append(writer(version.writer))
            output.append("\t\(version.operation.rawValue)\t")
            if let archived = version.archived {
                output.append("archived \(Timestamp.iso8601(archived)) by ")
                output.append(writer(version.archivedBy ?? ""))
                output.append(" (\(version.archivedBecause?.rawValue ?? "?"))")
            } else {
                output.append("current")
            }
            output.append(UInt8(ascii: "\n"))
        }
        return output
    }

    static func json(_ versions: [VaultItemVersion]) -> SecretBytes {
        var writer = JSONWriter()
        writer.beginArray()
        for version in versions {
            writer.beginObject()
            writer.key("version"); writer.number(Int(clamping: version.number))
            writer.attributes(of: version.item)
            writer.key("size"); writer.number(version.secretSize)
            writer.key("writer"); writer.string(version.writer)
            writer.key("operation"); writer.string(version.operation.rawValue)
            writer.key("archived"); writer.string(version.archived.map(Timestamp.iso8601))
            writer.key("archivedBy"); writer.string(version.archivedBy)
            writer.key("archivedBecause"); writer.string(version.archivedBecause?.rawValue)
            writer.endObject()
        }
        writer.endArray()
        writer.buffer.append(UInt8(ascii: "\n"))
        return writer.buffer
    }

    static func lines(_ changes: [VaultChange]) -> SecretBytes {
        var output = SecretBytes()
        for change in changes {
            output.append("\(Timestamp.iso8601(change.date))\t")
            output.append(writer(change.writer))
            output.append("\t\(change.operation.rawValue)\t")
            output.append(Escaping.escaped(change.service))
            output.append(UInt8(ascii: "\t"))
            output.append(Escaping.escaped(change.account))
            output.append("\t\(change.version)\n")
        }
        return output
    }

    static func json(_ changes: [VaultChange]) -> SecretBytes {
        var writer = JSONWriter()
        writer.beginArray()
        for change in changes {
            writer.beginObject()
            writer.key("time"); writer.string(Timestamp.iso8601(change.date))
            writer.key("writer"); writer.string(change.writer)
            writer.key("operation"); writer.string(change.operation.rawValue)
            writer.key("service"); writer.string(change.service)
            writer.key("account"); writer.string(change.account)
            writer.key("version"); writer.number(Int(clamping: change.version))
            writer.endObject()
        }
        writer.endArray()
        writer.buffer.append(UInt8(ascii: "\n"))
        return writer.buffer
    }

    /// A writer's name escaped for one field; "?" when none was recorded.
    private static func writer(_ name: String) -> String {
        name.isEmpty ? "?" : Escaping.escaped(name)
    }
}
