/// Writing a new vault into an empty file: the schema, the header and an empty manifest,
/// in one transaction.
extension VaultDatabase {
    /// Writes a complete new vault into the empty file at `path`, in one transaction.
    /// `manifestTag` is the tag of the empty manifest's root (all zero) under the new keys.
    static func initialize(fileAt path: String, header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        let database = try VaultDatabase(unconfigured: path)
        try database.run("PRAGMA journal_mode = WAL")
        try database.run("PRAGMA synchronous = FULL")
        try database.createVault(header: header, manifestTag: manifestTag)
    }

    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        do {
            try writeTransaction { () throws(StorageError) in
                try run("PRAGMA application_id = \(Self.applicationID)")
                try run("PRAGMA user_version = \(VaultHeader.currentFormatVersion)")
                try run(Self.schema)
                try insertHeader(header)
                try run("INSERT INTO vault_generation (singleton, generation) VALUES (1, 0)")
                try writeManifestRoot(.zero, tag: manifestTag, generation: 0)
            }
        } catch {
            throw error.flattened
        }
    }

    private convenience init(unconfigured path: String) throws(StorageError) {
        try self.init(connectingTo: path, access: .readWrite, busyTimeoutMilliseconds: 5_000, readOnlyBecause: nil)
    }
}
