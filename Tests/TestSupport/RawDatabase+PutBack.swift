extension RawDatabase {
    /// Every table of the vault put back, in place, to what the vault file `copy` holds
    /// (one transaction), while other connections have it open: what someone with write
    /// access to the database (a PostgreSQL host, a DBA) can do to its rows. With
    /// `hostWraps`, the host wraps too (both files must have that table).
    public func putRowsBack(from copy: String, hostWraps: Bool = false) {
        let tables = ["vault_header", "vault_items", "vault_manifest", "vault_generation"] + (hostWraps ? ["vault_host_wraps"] : [])
        execute("ATTACH DATABASE '\(copy)' AS old")
        execute("BEGIN IMMEDIATE")
        for table in tables {
            execute("DELETE FROM main.\"\(table)\"")
            execute("INSERT INTO main.\"\(table)\" SELECT * FROM old.\"\(table)\"")
        }
        execute("COMMIT")
        execute("DETACH DATABASE old")
    }

    /// A consistent copy of the whole vault at `path` (`VACUUM INTO`), to put back later.
    public func copy(to path: String) {
        execute("VACUUM INTO '\(path)'")
    }
}
