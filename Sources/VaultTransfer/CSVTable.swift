/// A CSV file whose first record names its columns, as every password manager writes.
struct CSVTable {
    let columns: [String]
    let rows: [CSVReader.Record]
    /// The format's name for messages, such as "KeePassXC CSV".
    let format: String

    init(_ bytes: UnsafeRawBufferPointer, format: String) throws(TransferError) {
        let records = try CSVReader.records(bytes)
        guard let header = records.first else { throw TransferError("the \(format) file is empty") }
        var columns: [String] = []
        for name in header.fields {
            guard let text = name.string() else { throw TransferError("the \(format) header is not valid UTF-8") }
            columns.append(text.lowercased())
        }
        self.columns = columns
        self.format = format
        rows = Array(records.dropFirst())
        for row in rows where row.fields.count != columns.count {
            throw TransferError("\(format) line \(row.line): \(row.fields.count) fields, but the header has \(columns.count)")
        }
    }

    /// The index of the first column named one of `names` (compared case-insensitively).
    func column(_ names: String...) throws(TransferError) -> Int {
        guard let index = optionalColumn(names) else { throw TransferError("the \(format) file has no '\(names[0])' column") }
        return index
    }

    func optionalColumn(_ names: [String]) -> Int? {
        columns.firstIndex { names.contains($0) }
    }

    /// Every row with a password as an item: service = the host of `url`, else `title`,
    /// else the URL as written; account = `username`; label = `title` (none when empty);
    /// secret = `password`. Rows without a password are counted as skipped.
    func logins(title: Int?, username: Int, password: Int, url: Int) throws(TransferError) -> ImportContents {
        var contents = ImportContents()
        for row in rows {
            guard !row.fields[password].isEmpty else { contents.skipped += 1; continue }
            let place = "\(format) line \(row.line)"
            var name = ""
            if let title { name = try ImportNames.text(row.fields[title], "title", at: place) }
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
