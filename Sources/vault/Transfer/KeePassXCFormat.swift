import VaultKit

/// KeePassXC's CSV export (Database > Export > CSV File), whose header is
/// `"Group","Title","Username","Password","URL","Notes",...`. Each entry with a
/// password becomes an item:
///
/// - service: the host of URL, else Title;
/// - account: Username;
/// - label: Title (none when empty);
/// - secret: Password.
///
/// Entries without a password are skipped and counted. Groups, notes and TOTP are not imported.
enum KeePassXCFormat {
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(TransferError) -> ImportContents {
        let format = "KeePassXC CSV"
        let table = try CSVTable(bytes, format: format)
        let title = try table.column("title", format: format)!
        let username = try table.column("username", format: format)!
        let password = try table.column("password", format: format)!
        let url = try table.column("url", format: format)!
        var contents = ImportContents()
        for row in table.rows {
            guard !row.fields[password].isEmpty else { contents.skipped += 1; continue }
            let place = "\(format) line \(row.line)"
            let name = try ImportNames.text(row.fields[title], "title", at: place)
            let link = try ImportNames.text(row.fields[url], "URL", at: place)
            contents.items.append(ImportedItem(
                service: try ImportNames.service(url: link, fallback: name, at: place),
                account: try ImportNames.text(row.fields[username], "username", at: place),
                label: name.isEmpty ? nil : name,
                generic: nil,
                secret: row.fields[password]
            ))
        }
        return contents
    }
}
