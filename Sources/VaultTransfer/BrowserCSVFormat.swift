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
        let table = try CSVTable(bytes, format: "\(browser) CSV")
        return try table.logins(
            title: table.optionalColumn(["name"]),
            username: try table.column("username"),
            password: try table.column("password"),
            url: try table.column("url", "origin")
        )
    }
}
