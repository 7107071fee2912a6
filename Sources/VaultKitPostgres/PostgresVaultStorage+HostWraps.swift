import VaultKit

/// The host key wraps (docs/FORMAT.md section 12): read with the header row, which
/// carries them, and rewritten whole.
extension PostgresVaultStorage {
    package func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        try run { () throws in
            guard let row = try currentHeaderRow() else { throw StorageError.notFound(location: location) }
            return row.hostWraps
        }
    }

    package func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        try write(changingHeader: true, hostWraps: true, PostgresSQL.markHostWraps, [.text(vault)])
        try write(changingHeader: true, PostgresSQL.deleteHostWraps, [.text(vault)])
        for wrap in wraps {
            try write(changingHeader: true, PostgresSQL.insertHostWrap,
                      [.text(vault), .text(wrap.name), .bytes(wrap.publicKey), .bytes(wrap.sealedMasterKey)])
        }
    }
}
