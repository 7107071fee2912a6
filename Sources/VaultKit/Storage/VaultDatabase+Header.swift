/// The header row: the format version, the vault id and how the master key is wrapped.
extension VaultDatabase {
    func readHeader() throws(StorageError) -> VaultHeader {
        try query("""
            SELECT format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit,
                   master_key_nonce, wrapped_master_key, master_key_check
            FROM vault_header WHERE singleton = 1
            """) { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            let version = Int(statement.int64(0))
            guard version <= VaultHeader.currentFormatVersion else { throw StorageError.unsupportedFormatVersion(version) }
            guard version >= 1 else { throw StorageError.corrupted(reason: .invalidFormatVersion) }
            let keySource: VaultHeader.KeySource
            switch statement.text(2) {
            case "argon2id13":
                let ops = statement.int64(4)
                let memory = statement.int64(5)
                guard ops > 0, memory > 0,
                      let parameters = try? KDFParameters(opsLimit: UInt64(ops), memoryLimit: Int(memory))
                else { throw StorageError.corrupted(reason: .kdfParametersOutOfBounds) }
                keySource = .passphrase(salt: Array(statement.blob(3)), parameters: parameters)
            case "raw":
                keySource = .rawKey
            default:
                throw StorageError.corrupted(reason: .unknownKDFAlgorithm)
            }
            return try VaultHeader(
                formatVersion: version,
                vaultID: Array(statement.blob(1)),
                keySource: keySource,
                masterKeyNonce: Array(statement.blob(6)),
                wrappedMasterKey: Array(statement.blob(7)),
                masterKeyCheck: Array(statement.blob(8))
            ).validated()
        }
    }

    /// The header's key check value alone: the cheap test for "re-keyed by another process".
    func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try query("SELECT master_key_check FROM vault_header WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            return Array(statement.blob(0))
        }
    }

    func insertHeader(_ header: VaultHeader) throws(StorageError) {
        try query("""
            INSERT INTO vault_header (singleton, format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit,
                                      kdf_memlimit, master_key_nonce, wrapped_master_key, master_key_check)
            VALUES (1, ?, ?, 'raw', NULL, NULL, NULL, ?, ?, ?)
            """) { statement in
            try statement.bind(1, int64: Int64(header.formatVersion))
            try statement.bind(2, blob: header.vaultID)
            try statement.bind(3, blob: header.masterKeyNonce)
            try statement.bind(4, blob: header.wrappedMasterKey)
            try statement.bind(5, blob: header.masterKeyCheck)
            _ = try statement.step()
        }
        try updateKeyWrapping(header)
    }

    /// Rewrites how the master key is wrapped (passphrase change, re-key).
    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        try query("""
            UPDATE vault_header SET kdf_algorithm = ?, kdf_salt = ?, kdf_opslimit = ?, kdf_memlimit = ?,
                master_key_nonce = ?, wrapped_master_key = ?, master_key_check = ?
            WHERE singleton = 1
            """) { statement in
            switch header.keySource {
            case .passphrase(let salt, let parameters):
                try statement.bind(1, text: "argon2id13")
                try statement.bind(2, blob: salt)
                try statement.bind(3, int64: Int64(parameters.opsLimit))
                try statement.bind(4, int64: Int64(parameters.memoryLimit))
            case .rawKey:
                try statement.bind(1, text: "raw")
                try statement.bindNull(2)
                try statement.bindNull(3)
                try statement.bindNull(4)
            }
            try statement.bind(5, blob: header.masterKeyNonce)
            try statement.bind(6, blob: header.wrappedMasterKey)
            try statement.bind(7, blob: header.masterKeyCheck)
            _ = try statement.step()
        }
    }
}
