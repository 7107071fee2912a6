import VaultKit

/// Creating a vault's rows (and the tables, the first time), and checking the tables
/// before a vault is opened.
extension PostgresVaultStorage {
    package func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        try run { () throws in
            // Only where something is missing: `CREATE INDEX IF NOT EXISTS` takes its
            // table's SHARE lock even when the index exists, and would hold every writer
            // of every vault in these tables (and queue those after it) until this commits.
            let complete = try connection.query(PostgresSQL.createdRelations) { $0.int64(0, 0) } == PostgresSchema.created.count
            try connection.execute(complete ? PostgresSQL.beginWrite : PostgresSQL.beginCreating)
            do {
                let inserted = try connection.change(
                    PostgresSQL.insertHeader,
                    [.text(vault), .int64(Int64(header.formatVersion)), .bytes(header.vaultID)] + Self.keyWrapping(header)
                        + [.bytes(ManifestDigest.zero.bytes), .bytes(manifestTag.bytes)])
                guard inserted == 1 else { throw StorageError.alreadyExists(location: location) }
                try connection.execute(PostgresSQL.commit)
            } catch {
                try? connection.execute(PostgresSQL.rollback)
                throw error
            }
        }
        // Whether the writes record change markers: the tables were created (or found) above.
        try checkSchema(formatVersion: header.formatVersion)
    }

    /// Checks that the database holds exactly the tables, columns and keys of
    /// ``PostgresSchema`` and no user trigger or rule on them: a trigger could change what
    /// a statement does, a missing key could let one lookup id be stored twice.
    ///
    /// Two layouts pass: with the change marker's table and index (``changeMarkers``), or
    /// without them (earlier releases'). Without them, the table is created if this role
    /// may (then checked again); else this storage lists changed buckets by row versions.
    package func checkSchema(formatVersion: Int) throws(StorageError) {
        // Format 4 (item history) has format 3's tables; a format-3 vault is upgraded on open.
        guard (3...VaultHeader.currentFormatVersion).contains(formatVersion) else { throw .schemaChanged }
        try run { () throws in
            if try checkedLayout() { return }
            do {
                try connection.execute(PostgresSQL.createChanges)
            } catch is PostgresFailure {
                // A role without CREATE: the earlier layout stays, and so does `xmin`.
                try? connection.execute(PostgresSQL.rollback)
                return
            }
            // Still the earlier layout if the table is another role's that this one may not read.
            _ = try checkedLayout()
        }
    }

    /// Compares the layout with the two that pass, and sets ``changeMarkers``; returns
    /// whether the change marker is there.
    private func checkedLayout() throws -> Bool {
        let columns = try connection.query(PostgresSQL.schemaColumns) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
        let keys = try connection.query(PostgresSQL.schemaPrimaryKeys) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
        let (hooks, plannerOption) = try connection.query(PostgresSQL.schemaHooks) { rows in (rows.int64(0, 0), rows.text(0, 1) == "true") }
        guard hooks == 0 else { throw StorageError.schemaChanged }
        if plannerOption { planServiceTagsAsDistinct() }
        if columns == PostgresSchema.expectedColumns, keys == PostgresSchema.expectedPrimaryKeys {
            changeMarkers = false
            return false
        }
        let (index, writable) = try connection.query(PostgresSQL.schemaChanges) { rows in (rows.int64(0, 0), rows.text(0, 1) == "true") }
        guard columns == PostgresSchema.expectedColumns.union(PostgresSchema.expectedChangesColumns),
              keys == PostgresSchema.expectedPrimaryKeys.union([PostgresSchema.expectedChangesPrimaryKey]), index >= 1
        else { throw StorageError.schemaChanged }
        // A role that may read the markers but not write them keeps to row versions: its
        // writes would fail on them.
        changeMarkers = writable
        return true
    }

    /// Sets ``PostgresSQL/serviceTagsPlannedAsDistinct`` once, as the table's owner: an
    /// estimate, so a failure (another session altering the table) changes nothing else.
    private func planServiceTagsAsDistinct() {
        do {
            try connection.execute(PostgresSQL.serviceTagsPlannedAsDistinct)
        } catch {
            try? connection.execute(PostgresSQL.rollback)
        }
    }
}
