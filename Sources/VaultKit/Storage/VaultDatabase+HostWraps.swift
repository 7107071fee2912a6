/// Host key wraps (docs/FORMAT.md section 12), in a table made by the first `addHost`.
extension VaultDatabase {
    func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        let exists = try query("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'vault_host_wraps'") { statement in
            _ = try statement.step()
            return statement.int64(0) > 0
        }
        guard exists else { return nil }
        return try query("SELECT name, public_key, sealed_master_key FROM vault_host_wraps ORDER BY CAST(name AS BLOB)") { statement in
            var wraps: [StoredHostWrap] = []
            while try statement.step() {
                wraps.append(StoredHostWrap(
                    name: statement.text(0) ?? "", publicKey: Array(statement.blob(1)), sealedMasterKey: Array(statement.blob(2))
                ))
            }
            return wraps
        }
    }

    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        if try readHostWraps() == nil { try run(Self.hostWrapsTable) }
        try run("DELETE FROM vault_host_wraps")
        for wrap in wraps {
            try query("INSERT INTO vault_host_wraps (name, public_key, sealed_master_key) VALUES (?, ?, ?)") { statement in
                try statement.bind(1, text: wrap.name)
                try statement.bind(2, blob: wrap.publicKey)
                try statement.bind(3, blob: wrap.sealedMasterKey)
                _ = try statement.step()
            }
        }
    }
}
