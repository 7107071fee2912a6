import VaultKit

/// Creating a vault's rows (and the tables, the first time), and checking the tables
/// before a vault is opened.
extension PostgresVaultStorage {
    package func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        try run { () throws in
            try connection.execute(PostgresSQL.beginCreating)
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
    }

    /// Checks that the database holds exactly the tables, columns and keys of
    /// ``PostgresSchema`` and no user trigger or rule on them: a trigger could change what
    /// a statement does, a missing key could let one lookup id be stored twice.
    package func checkSchema(formatVersion: Int) throws(StorageError) {
        // Format 4 (item history) has format 3's tables; a format-3 vault is upgraded on open.
        guard (3...VaultHeader.currentFormatVersion).contains(formatVersion) else { throw .schemaChanged }
        try run { () throws in
            let columns = try connection.query(PostgresSQL.schemaColumns) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
            let keys = try connection.query(PostgresSQL.schemaPrimaryKeys) { rows in Set((0..<rows.count).map { rows.text($0, 0) }) }
            let hooks = try connection.query(PostgresSQL.schemaHooks) { rows in rows.int64(0, 0) }
            guard columns == PostgresSchema.expectedColumns, keys == PostgresSchema.expectedPrimaryKeys, hooks == 0 else {
                throw StorageError.schemaChanged
            }
        }
    }
}
