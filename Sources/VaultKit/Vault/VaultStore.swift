/// The engine's side of the storage seam: the same calls as ``VaultStorage``, with
/// every ``StorageError`` converted to the public ``VaultError`` here, in one place.
///
/// Why a wrapper and not a conversion at each call: Swift does not infer a closure's
/// typed `throws`, so converting at ~50 call sites would bury the engine's logic in
/// annotations. Closures the engine passes in throw ``VaultError`` and their errors
/// come back unchanged (``StorageFailure/body(_:)``).
struct VaultStore {
    let storage: any VaultStorage
    /// The same storage when it inserts many rows per call, cast once here rather than
    /// on every write.
    private let bulk: (any BulkInsertingStorage)?

    init(_ storage: any VaultStorage) {
        self.storage = storage
        bulk = storage as? any BulkInsertingStorage
    }

    // MARK: Transactions

    func writeTransaction<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        try passing { () throws(StorageFailure<VaultError>) in try storage.writeTransaction(body) }
    }

    /// A write transaction opening with `opening`'s insert, on a ``BulkInsertingStorage``
    /// (which may send it with the lock); with none, or on another storage, a plain one.
    func writeTransaction<Result>(opening: OpeningInsert?, _ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        guard let opening, let bulk else { return try writeTransaction(body) }
        return try passing { () throws(StorageFailure<VaultError>) in try bulk.writeTransaction(opening: opening, body) }
    }

    func readTransaction<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        try passing { () throws(StorageFailure<VaultError>) in try storage.readTransaction(body) }
    }

    var snapshotVersion: Int64 { storage.snapshotVersion }

    func pinSnapshot() throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.pinSnapshot() }
    }

    func checkSchema(formatVersion: Int) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.checkSchema(formatVersion: formatVersion) }
    }

    // MARK: Header

    /// The header, with the digest of the host key wraps the manifest tag covers with it.
    func readHeader() throws(VaultError) -> VaultHeader {
        var header = try Self.converting { () throws(StorageError) in try storage.readHeader() }
        header.hostWrapsDigest = try readHostWraps().map(HostWraps.digest)
        return header
    }

    func readHostWraps() throws(VaultError) -> [StoredHostWrap]? {
        try Self.converting { () throws(StorageError) in try storage.readHostWraps() }
    }

    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.replaceHostWraps(wraps) }
    }

    func readMasterKeyCheck() throws(VaultError) -> [UInt8] {
        try Self.converting { () throws(StorageError) in try storage.readMasterKeyCheck() }
    }

    func updateKeyWrapping(_ header: VaultHeader) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.updateKeyWrapping(header) }
    }

    func setFormatVersion(_ version: Int) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.setFormatVersion(version) }
    }

    // MARK: Items

    func withSealedItem<Result>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(VaultError) -> Result
    ) throws(VaultError) -> Result? {
        try passing { () throws(StorageFailure<VaultError>) in try storage.withSealedItem(lookupID: lookupID, body) }
    }

    func forEachRow(serviceTag: [UInt8]?, _ body: (StoredRow) throws(VaultError) -> Void) throws(VaultError) {
        try passing { () throws(StorageFailure<VaultError>) in try storage.forEachRow(serviceTag: serviceTag, body) }
    }

    func forEachRowIdentity(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(VaultError) -> Void
    ) throws(VaultError) {
        try passing { () throws(StorageFailure<VaultError>) in try storage.forEachRowIdentity(in: range, body) }
    }

    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(VaultError) {
        try Self.converting { () throws(StorageError) in
            try storage.upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
        }
    }

    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(VaultError) -> Bool {
        try Self.converting { () throws(StorageError) in
            try storage.insertIfAbsent(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
        }
    }

    /// How many `set`s to gather for one insert call: 1 (none gathered) unless the
    /// storage is a ``BulkInsertingStorage``.
    var bulkInsertLimit: Int {
        bulk?.bulkInsertLimit ?? 1
    }

    /// Inserts the rows in one call (only gathered when ``bulkInsertLimit`` is above 1).
    func insertAllIfAbsent(_ rows: [StoredRow]) throws(VaultError) -> [StoredRow?] {
        guard let bulk else { throw .corrupted(reason: .unexpectedStorageError) }
        return try Self.converting { () throws(StorageError) in try bulk.insertAllIfAbsent(rows) }
    }

    /// Whether a `set` can be prepared before its transaction and committed in one call
    /// (``PreparedSet``): only on a ``BulkInsertingStorage``.
    var commitsPreparedSets: Bool { bulk != nil }

    /// A bucket's rows, whole (only on a ``BulkInsertingStorage``).
    func forEachRow(in range: (lower: [UInt8], upper: [UInt8]?), _ body: (StoredRow) throws(VaultError) -> Void) throws(VaultError) {
        guard let bulk else { throw .corrupted(reason: .unexpectedStorageError) }
        try passing { () throws(StorageFailure<VaultError>) in try bulk.forEachRow(in: range, body) }
    }

    func commit(_ set: PreparedSet) throws(VaultError) -> PreparedSet.Outcome {
        guard let bulk else { throw .corrupted(reason: .unexpectedStorageError) }
        return try Self.converting { () throws(StorageError) in try bulk.commit(set) }
    }

    func delete(lookupID: [UInt8]) throws(VaultError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        try Self.converting { () throws(StorageError) in try storage.delete(lookupID: lookupID) }
    }

    func deleteAll(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(VaultError) -> Void
    ) throws(VaultError) -> Int {
        try passing { () throws(StorageFailure<VaultError>) in try storage.deleteAll(serviceTag: serviceTag, body) }
    }

    // MARK: Manifest and generation

    func readManifestRoot() throws(VaultError) -> (root: [UInt8]?, tag: [UInt8]?) {
        try Self.converting { () throws(StorageError) in try storage.readManifestRoot() }
    }

    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.writeManifestRoot(root, tag: tag, generation: generation) }
    }

    func readGeneration() throws(VaultError) -> UInt64 {
        try Self.converting { () throws(StorageError) in try storage.readGeneration() }
    }

    func manifestDigest(bucket: Int) throws(VaultError) -> [UInt8]? {
        try Self.converting { () throws(StorageError) in try storage.manifestDigest(bucket: bucket) }
    }

    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.setManifestDigest(bucket: bucket, digest) }
    }

    func forEachManifestBucket(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(VaultError) -> Void) throws(VaultError) {
        try passing { () throws(StorageFailure<VaultError>) in try storage.forEachManifestBucket(body) }
    }

    func deleteAllManifestBuckets() throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.deleteAllManifestBuckets() }
    }

    // MARK: Older formats

    func addManifestSchema() throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.addManifestSchema() }
    }

    func addGenerationTable(startingAt generation: UInt64) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.addGenerationTable(startingAt: generation) }
    }

    // MARK: The conversion

    /// Runs a storage call, its failure converted; also for the calls outside the seam
    /// that only a file has (opening one, a backup).
    static func converting<Result>(_ call: () throws(StorageError) -> Result) throws(VaultError) -> Result {
        do { return try call() } catch { throw VaultError(error) }
    }

    private func passing<Result>(_ call: () throws(StorageFailure<VaultError>) -> Result) throws(VaultError) -> Result {
        do {
            return try call()
        } catch {
            switch error {
            case .storage(let failure): throw VaultError(failure)
            case .body(let error): throw error
            }
        }
    }
}
