internal import CSQLite

/// A consistent copy of the vault in a new file (`Vault.backup(to:)`): only a file has one.
extension VaultDatabase: BackupCapableStorage {
    /// Copies this database, as one consistent snapshot, into the empty file at
    /// `destination` with SQLite's online backup (`sqlite3_backup_*`), and syncs it.
    ///
    /// Why not copy the file: committed data may still be in `-wal`, which a copy of the
    /// main file alone misses (and a copy taken mid-write is torn).
    func backup(into destination: String) throws(StorageError) {
        let target: SQLiteConnection
        do {
            target = try SQLiteConnection(path: destination)
            try target.configureDefensively(busyTimeoutMilliseconds: 5_000)
            // A rollback journal while copying, synced on commit: the copy is on disk when
            // this returns; opening it later as a vault switches it to WAL.
            try target.execute("PRAGMA synchronous = FULL")
        } catch {
            throw error.translated(path: destination)
        }
        guard let backup = sqlite3_backup_init(target.handle, "main", connection.handle, "main") else {
            throw target.error(sqlite3_errcode(target.handle)).translated(path: destination)
        }
        let status = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE, finish == SQLITE_OK else {
            let code = status == SQLITE_DONE ? finish : status
            if code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED { throw .busy(location: path) }
            throw target.error(code).translated(path: destination)
        }
    }
}
