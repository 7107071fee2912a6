/// The schema: every table and index as SQLite keeps its text, and the check that a file
/// holds exactly these (the format's layout is in `docs/FORMAT.md` section 2).
extension VaultDatabase {
    /// The schema, one statement per object, exactly as SQLite keeps it in `sqlite_schema`
    /// (the text of each `CREATE`, without its semicolon): ``checkSchema(formatVersion:)``
    /// compares the file's schema with these texts.
    /// The header's columns in format 1; format 2 added the manifest's two. The three
    /// texts below are built from this list, so they cannot drift apart.
    private static let formatOneHeaderColumns = [
        "singleton INTEGER PRIMARY KEY CHECK (singleton = 1)",
        "format_version INTEGER NOT NULL",
        "vault_id BLOB NOT NULL",
        "kdf_algorithm TEXT NOT NULL",
        "kdf_salt BLOB",
        "kdf_opslimit INTEGER",
        "kdf_memlimit INTEGER",
        "master_key_nonce BLOB NOT NULL",
        "wrapped_master_key BLOB NOT NULL",
        "master_key_check BLOB NOT NULL",
    ]
    private static let formatOneHeaderBody = "CREATE TABLE vault_header (\n"
        + formatOneHeaderColumns.map { "    " + $0 }.joined(separator: ",\n")
    private static let headerTable = formatOneHeaderBody + ",\n    manifest_root BLOB,\n    manifest_tag BLOB\n) STRICT"
    /// Format 1's header table (internal for the downgrade tests, which forge it).
    static let formatOneHeaderTable = formatOneHeaderBody + "\n) STRICT"
    /// Format 1's table after the upgrade's `ALTER TABLE ... ADD COLUMN`s, as SQLite rewrites it.
    private static let upgradedHeaderTable = formatOneHeaderBody + "\n, manifest_root BLOB, manifest_tag BLOB) STRICT"
    private static let itemsTable = """
        CREATE TABLE vault_items (
            lookup_id BLOB PRIMARY KEY NOT NULL,
            service_tag BLOB NOT NULL,
            nonce BLOB NOT NULL,
            sealed BLOB NOT NULL
        ) STRICT, WITHOUT ROWID
        """
    private static let itemsByServiceIndex = "CREATE INDEX vault_items_by_service ON vault_items (service_tag)"
    /// Format 2's manifest buckets. The header's `manifest_root`/`manifest_tag` columns
    /// may be NULL only in a format-1 file: format 1 created them without, and
    /// `ALTER TABLE ... ADD COLUMN` cannot add a NOT NULL column to existing rows.
    static let manifestTable = """
        CREATE TABLE vault_manifest (
            bucket INTEGER PRIMARY KEY NOT NULL,
            digest BLOB NOT NULL
        ) STRICT
        """
    /// Format 3's write counter: one more for every committed change (docs/FORMAT.md
    /// section 6), so a state can be told to be older than another (the rollback guard).
    static let generationTable = """
        CREATE TABLE vault_generation (
            singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
            generation INTEGER NOT NULL
        ) STRICT
        """
    /// Host key wraps (docs/FORMAT.md section 12): created by the first `addHost`, so a
    /// vault without hosts keeps exactly the format-3 schema above.
    static let hostWrapsTable = """
        CREATE TABLE vault_host_wraps (
            name TEXT PRIMARY KEY NOT NULL,
            public_key BLOB NOT NULL,
            sealed_master_key BLOB NOT NULL
        ) STRICT, WITHOUT ROWID
        """
    static let schema = [headerTable, itemsTable, itemsByServiceIndex, manifestTable, generationTable].joined(separator: ";\n") + ";"

    /// Checks that the file holds exactly VaultKit's tables and index, defined exactly as
    /// VaultKit defines them, and nothing else (no trigger, view or extra index).
    ///
    /// Why: the rows' integrity rests on the schema. A `vault_items` rebuilt without its
    /// primary key could hold one lookup id twice; a trigger or view could change what a
    /// statement does. SQLite keeps each object's `CREATE` text, so comparing texts is
    /// one cheap query.
    func checkSchema(formatVersion: Int) throws(StorageError) {
        var expected: [String: Set<String>] = [
            "table vault_items": [Self.itemsTable],
            "index vault_items_by_service": [Self.itemsByServiceIndex],
        ]
        if formatVersion >= 2 {
            expected["table vault_header"] = [Self.headerTable, Self.upgradedHeaderTable]
            expected["table vault_manifest"] = [Self.manifestTable]
            if formatVersion >= 3 { expected["table vault_generation"] = [Self.generationTable] }
        } else {
            expected["table vault_header"] = [Self.formatOneHeaderTable]
        }
        // The one optional object: its presence is authenticated by the manifest tag instead.
        let optional: [String: Set<String>] = formatVersion >= 3 ? ["table vault_host_wraps": [Self.hostWrapsTable]] : [:]
        var seen = 0
        try query("SELECT type, name, sql FROM sqlite_schema") { statement in
            while try statement.step() {
                let key = "\(statement.text(0) ?? "") \(statement.text(1) ?? "")"
                if let texts = optional[key], let sql = statement.text(2), texts.contains(sql) { continue }
                guard let texts = expected[key], let sql = statement.text(2), texts.contains(sql) else {
                    throw StorageError.schemaChanged
                }
                seen += 1
            }
        }
        guard seen == expected.count else { throw .schemaChanged }
    }
}
