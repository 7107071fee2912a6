import VaultKit

/// Bitwarden's unencrypted JSON export (`bw export --format json`, or the web vault's
/// "File format: .json"). Only logins (`"type": 1`) with a password become items:
///
/// - service: the host of the first URI that has one, else the item's name;
/// - account: `login.username` (empty when there is none);
/// - label: the item's name;
/// - secret: `login.password`.
///
/// Secure notes, cards and identities, and logins without a password, are skipped
/// and counted. Notes, TOTP seeds and custom fields are not imported.
enum BitwardenFormat {
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> ImportContents {
        let root = try JSONReader.parseImport(bytes)
        if case .bool(true) = root["encrypted"] ?? .null {
            throw TransferError("this Bitwarden export is encrypted; export it again as unencrypted JSON")
        }
        guard let entries = root["items"]?.array else { throw TransferError("not a Bitwarden JSON export: no \"items\" array") }
        var contents = ImportContents()
        for (number, entry) in entries.enumerated() {
            let place = "Bitwarden item \(number + 1)"
            guard case .number(1) = entry["type"] ?? .null, let login = entry["login"],
                  let password = login["password"]?.secret, !password.isEmpty else {
                contents.skipped += 1
                continue
            }
            let name = try ImportNames.text(entry["name"]?.secret, "name", at: place)
            let account = try ImportNames.text(login["username"]?.secret, "username", at: place)
            var host: String?
            for uri in login["uris"]?.array ?? [] {
                let text = try ImportNames.text(uri["uri"]?.secret, "URI", at: place)
                if let found = ImportNames.host(ofURL: text) { host = found; break }
            }
            let service = if let host { host } else { try ImportNames.service(url: "", fallback: name, at: place) }
            contents.items.append(ImportedItem(service: service, account: account, label: name.isEmpty ? nil : name, generic: nil, secret: password))
        }
        return contents
    }
}
