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
        let table = try CSVTable(bytes, format: "KeePassXC CSV")
        return try table.logins(
            title: try table.column("title"),
            username: try table.column("username"),
            password: try table.column("password"),
            url: try table.column("url")
        )
    }
}
