#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

/// VaultKit's own export format, written by `vault export --format json` and read back
/// by `vault import --format json`: one object,
///
/// ```json
/// {"format":"vaultkit-export","version":1,"items":[
///   {"service":"...","account":"...","label":null,"generic":null,
///    "created":"2026-11-22T17:50:27Z","modified":"2026-11-22T17:50:27Z","secret":"..."}]}
/// ```
///
/// Item members are those of `vault get --json`. Generic data or a secret that is not
/// UTF-8 is written as `null` with an extra `genericBase64` / `secretBase64`. An import
/// restores service, account, label, generic and secret exactly; created and modified
/// are informative (the vault sets them when the item is written).
public enum VaultKitJSONFormat {
    static let formatName = "vaultkit-export"
    static let version = 1

    // MARK: Writing

    /// The whole export of `vault`, in the order `vault list` uses, in memory that is
    /// zeroed when released: every secret is in it, in plain text.
    public static func export(_ vault: Vault) throws(VaultError) -> SecretBytes {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("format"); writer.string(formatName)
        writer.key("version"); writer.number(version)
        writer.key("items")
        writer.beginArray()
        let items = try vault.items().sorted {
            $0.service != $1.service
                ? $0.service.utf8.lexicographicallyPrecedes($1.service.utf8)
                : $0.account.utf8.lexicographicallyPrecedes($1.account.utf8)
        }
        for item in items {
            guard let entry = try vault.entry(service: item.service, account: item.account) else { throw .itemNotFound }
            writer.beginObject()
            writer.attributes(of: entry.item)
            writer.key("secret")
            entry.secret.withUnsafeBytes { bytes in
                if UTF8Validation.isValid(bytes) {
                    writer.utf8String(bytes)
                } else {
                    writer.string(nil)
                    writer.key("secretBase64")
                    writer.base64(bytes)
                }
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        writer.buffer.append(UInt8(ascii: "\n"))
        return writer.buffer
    }

    // MARK: Reading

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> ImportContents {
        let root = try JSONReader.parseImport(bytes)
        guard root["format"]?.secret?.string() == formatName else {
            throw TransferError("not a VaultKit export: \"format\" is not \"\(formatName)\"")
        }
        guard case .number(let number) = root["version"] ?? .null, number == Double(version) else {
            throw TransferError("unsupported VaultKit export version; this vault reads version \(version)")
        }
        guard let entries = root["items"]?.array else { throw TransferError("not a VaultKit export: no \"items\" array") }
        var contents = ImportContents()
        for (number, entry) in entries.enumerated() {
            let place = "VaultKit export item \(number + 1)"
            guard let service = entry["service"]?.secret, let account = entry["account"]?.secret else {
                throw TransferError("\(place): service and account are required strings")
            }
            guard !service.isEmpty else { throw TransferError("\(place): the service is empty") }
            guard let secret = try member(entry, text: "secret", base64: "secretBase64", at: place) else {
                throw TransferError("\(place): no secret (\"secret\" or \"secretBase64\")")
            }
            var label: String?
            if let text = entry["label"]?.secret { label = try ImportNames.text(text, "label", at: place) }
            contents.items.append(ImportedItem(
                service: try ImportNames.text(service, "service", at: place),
                account: try ImportNames.text(account, "account", at: place),
                label: label,
                generic: try member(entry, text: "generic", base64: "genericBase64", at: place)?.data(),
                secret: secret
            ))
        }
        return contents
    }

    /// The member `text` as it is, else the member `base64` decoded, else `nil`. Decoding
    /// goes through `Data`, an unprotected copy, for the rare secret that is not text.
    private static func member(_ entry: JSONValue, text: String, base64: String, at place: String) throws(TransferError) -> SecretBytes? {
        if let value = entry[text]?.secret { return value }
        guard let encoded = entry[base64]?.secret else { return nil }
        let decoded = encoded.withUnsafeBytes { Data(base64Encoded: Data($0)) }
        guard let decoded else { throw TransferError("\(place): \(base64) is not valid base64") }
        return SecretBytes(decoded)
    }
}
