import VaultKit

/// The header row: read once per transaction (``PostgresHeaderRow``, kept until the
/// transaction ends or writes it), and its key wrapping and format version written.
extension PostgresVaultStorage {
    package func readHeader() throws(StorageError) -> VaultHeader {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return try row.header()
        }
    }

    package func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return row.masterKeyCheck
        }
    }

    /// The header row: the one this transaction keeps, else read now (and kept, in a transaction).
    func currentHeaderRow() throws -> PostgresHeaderRow? {
        if let kept = transaction.headerRow { return kept }
        let row = try connection.query(PostgresSQL.headerRow, [.text(vault)]) { PostgresHeaderRow($0) }
        transaction.keep(headerRow: row)
        return row
    }

    package func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        try write(changingHeader: true, PostgresSQL.updateKeyWrapping, [.text(vault)] + Self.keyWrapping(header))
    }

    package func setFormatVersion(_ version: Int) throws(StorageError) {
        try write(changingHeader: true, PostgresSQL.setFormatVersion, [.text(vault), .int64(Int64(version))])
    }

    /// The key wrapping columns `kdf_algorithm` .. `master_key_check`, as parameters.
    static func keyWrapping(_ header: VaultHeader) -> [PostgresConnection.Parameter] {
        let kdf: [PostgresConnection.Parameter] = switch header.keySource {
        case .passphrase(let salt, let parameters):
            [.text("argon2id13"), .bytes(salt), .int64(Int64(parameters.opsLimit)), .int64(Int64(parameters.memoryLimit))]
        case .rawKey:
            [.text("raw"), .nullBytes, .nullInt64, .nullInt64]
        }
        return kdf + [.bytes(header.masterKeyNonce), .bytes(header.wrappedMasterKey), .bytes(header.masterKeyCheck)]
    }
}
