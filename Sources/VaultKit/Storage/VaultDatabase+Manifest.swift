/// The manifest (format 2; see ManifestHash.swift and docs/FORMAT.md): its buckets, the
/// root and tag in the header, and the generation (format 3) the tag covers.
extension VaultDatabase {
    /// The stored manifest root and its tag; `nil` where a column is NULL (format 1).
    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        try query("SELECT manifest_root, manifest_tag FROM vault_header WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.corrupted(reason: .missingHeader) }
            return (statement.isNull(0) ? nil : Array(statement.blob(0)), statement.isNull(1) ? nil : Array(statement.blob(1)))
        }
    }

    /// Stores the root, its tag and the generation the tag covers, in the caller's transaction.
    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        try query("UPDATE vault_header SET manifest_root = ?, manifest_tag = ? WHERE singleton = 1") { statement in
            try statement.bind(1, blob: root.bytes)
            try statement.bind(2, blob: tag.bytes)
            _ = try statement.step()
        }
        try query("UPDATE vault_generation SET generation = ? WHERE singleton = 1") { statement in
            try statement.bind(1, int64: Int64(bitPattern: generation))
            _ = try statement.step()
        }
    }

    /// The write counter (format 3).
    func readGeneration() throws(StorageError) -> UInt64 {
        try query("SELECT generation FROM vault_generation WHERE singleton = 1") { statement in
            guard try statement.step() else { throw StorageError.generationMissing }
            let value = statement.int64(0)
            guard value >= 0 else { throw StorageError.generationInvalid }
            return UInt64(value)
        }
    }

    /// One bucket's stored digest as raw bytes, or `nil` when it has no row (empty bucket).
    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        try query("SELECT digest FROM vault_manifest WHERE bucket = ?") { statement in
            try statement.bind(1, int64: Int64(bucket))
            guard try statement.step() else { return nil }
            return Array(statement.blob(0))
        }
    }

    /// Stores a bucket's digest; an all-zero digest (an empty bucket) is stored as no row.
    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        let sql = digest.isZero
            ? "DELETE FROM vault_manifest WHERE bucket = ?"
            : "INSERT OR REPLACE INTO vault_manifest (bucket, digest) VALUES (?, ?)"
        try query(sql) { statement in
            try statement.bind(1, int64: Int64(bucket))
            if !digest.isZero { try statement.bind(2, blob: digest.bytes) }
            _ = try statement.step()
        }
    }

    /// Calls `body` for every stored bucket digest.
    func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try query("SELECT bucket, digest FROM vault_manifest", passing: BodyError.self) { statement in
            while try statement.step() {
                try StorageFailure.passing { () throws(BodyError) in try body(statement.int64(0), statement.blob(1)) }
            }
        }
    }

    func deleteAllManifestBuckets() throws(StorageError) {
        try run("DELETE FROM vault_manifest")
    }
}
