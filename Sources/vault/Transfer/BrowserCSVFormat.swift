import VaultKit

/// The password CSV that Chrome (and other Chromium browsers: `name,url,username,password,note`)
/// and Firefox (`"url","username","password","httpRealm",...`) export. Each login with a
/// password becomes an item:
///
/// - service: the host of url (for Firefox's `android://...@app.id/` entries, the app
///   identifier), else name, else the url as written;
/// - account: username;
/// - label: name (Chrome; none in Firefox's export);
/// - secret: password.
///
/// Logins without a password are skipped and counted.
enum BrowserCSVFormat {
    static func parse(_ bytes: UnsafeRawBufferPointer, browser: String) throws(TransferError) -> ImportContents {
        let format = "\(browser) CSV"
        let table = try CSVTable(bytes, format: format)
        let url = try table.column("url", "origin", format: format)!
        let username = try table.column("username", format: format)!
        let password = try table.column("password", format: format)!
        let name = try table.column("name", format: format, required: false)
        var contents = ImportContents()
        for row in table.rows {
            guard !row.fields[password].isEmpty else { contents.skipped += 1; continue }
            let place = "\(format) line \(row.line)"
            let title = try name.map { (column) throws(TransferError) in try ImportNames.text(row.fields[column], "name", at: place) } ?? ""
            let link = try ImportNames.text(row.fields[url], "url", at: place)
            contents.items.append(ImportedItem(
                service: try ImportNames.service(url: link, fallback: title, at: place),
                account: try ImportNames.text(row.fields[username], "username", at: place),
                label: title.isEmpty ? nil : title,
                generic: nil,
                secret: row.fields[password]
            ))
        }
        return contents
    }
}
