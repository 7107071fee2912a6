/// The engine's side of the storage seam: the same calls as ``VaultStorage``, with
/// every ``StorageError`` converted to the public ``VaultError`` here, in one place.
///
/// Why a wrapper and not a conversion at each call: Swift does not infer a closure's
/// typed `throws`, so converting at ~50 call sites would bury the engine's logic in
/// annotations. Closures the engine passes in throw ``VaultError`` and their errors
/// come back unchanged (``StorageFailure/body(_:)``).
struct VaultStore {
    let storage: any VaultStorage
    /// The same storage's optional capabilities, cast once here rather than on every write;
    /// each switches on exactly what its protocol says.
    private let gathering: (any GatheringInsertStorage)?
    private let opening: (any OpeningInsertStorage)?
    private let preparing: (any PreparedSetStorage)?

    init(_ storage: any VaultStorage) {
        self.storage = storage
        gathering = storage as? any GatheringInsertStorage
        opening = storage as? any OpeningInsertStorage
        preparing = storage as? any PreparedSetStorage
    }

    // MARK: Transactions

    func writeTransaction<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        try passing { () throws(StorageFailure<VaultError>) in try storage.writeTransaction(body) }
    }

    /// A write transaction opening with `insert`, on an ``OpeningInsertStorage`` (which
    /// may send it with the lock); with none, or on another storage, a plain one.
    func writeTransaction<Result>(opening insert: OpeningInsert?, _ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        guard let insert, let opening else { return try writeTransaction(body) }
        return try passing { () throws(StorageFailure<VaultError>) in try opening.writeTransaction(opening: insert, body) }
    }

    /// Whether a lone `set` may be sealed before its transaction and sent with the lock
    /// (``OpeningInsertStorage``).
    var sendsOpeningInserts: Bool { opening != nil }

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
    /// storage is a ``GatheringInsertStorage``.
    var insertGatherLimit: Int {
        gathering?.insertGatherLimit ?? 1
    }

    /// Inserts the rows in one call (only gathered on a ``GatheringInsertStorage``).
    func insertAllIfAbsent(_ rows: [StoredRow]) throws(VaultError) -> [StoredRow?] {
        guard let gathering else { throw .corrupted(reason: .unexpectedStorageError) }
        return try Self.converting { () throws(StorageError) in try gathering.insertAllIfAbsent(rows) }
    }

    /// Whether a `set` can be prepared before its transaction and committed in one call
    /// (``PreparedSetStorage``).
    var commitsPreparedSets: Bool { preparing != nil }

    /// A bucket's rows, whole (only on a ``PreparedSetStorage``).
    func forEachRow(in range: (lower: [UInt8], upper: [UInt8]?), _ body: (StoredRow) throws(VaultError) -> Void) throws(VaultError) {
        guard let preparing else { throw .corrupted(reason: .unexpectedStorageError) }
        try passing { () throws(StorageFailure<VaultError>) in try preparing.forEachRow(in: range, body) }
    }

    func commit(_ set: PreparedSet) throws(VaultError) -> PreparedSet.Outcome {
        guard let preparing else { throw .corrupted(reason: .unexpectedStorageError) }
        return try Self.converting { () throws(StorageError) in try preparing.commit(set) }
    }

    /// ``PreparedSetStorage/commitRebased(changedSince:_:)``.
    func commitRebased(changedSince mark: Int64, _ rebase: () throws(VaultError) -> PreparedSet?) throws(VaultError) -> PreparedSet.Outcome? {
        guard let preparing else { throw .corrupted(reason: .unexpectedStorageError) }
        return try passing { () throws(StorageFailure<VaultError>) in try preparing.commitRebased(changedSince: mark, rebase) }
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

    var manifestMark: Int64? { storage.manifestMark }
    var manifestMarkOfLastCommit: Int64? { storage.manifestMarkOfLastCommit }

    func manifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(VaultError) -> [(bucket: Int64, digest: [UInt8]?)]? {
        try Self.converting { () throws(StorageError) in try storage.manifestBuckets(changedSince: mark, including: bucket) }
    }

    func prefetchManifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.prefetchManifestBuckets(changedSince: mark, including: bucket) }
    }

    func prefetchItem(lookupID: [UInt8]) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.prefetchItem(lookupID: lookupID) }
    }

    func carryVerifiedBuckets(unchanged: [Int], changed: [Int]) -> [Int] { storage.carryVerifiedBuckets(unchanged: unchanged, changed: changed) }

    func deleteAllManifestBuckets() throws(VaultError) {
        try Self.converting { () throws(StorageError) in try storage.deleteAllManifestBuckets() }
    }

    // MARK: Older formats

    /// Only a storage that holds older formats can upgrade them (``FormatUpgradingStorage``);
    /// an older format anywhere else is not that storage's schema.
    func addManifestSchema() throws(VaultError) {
        try Self.converting { () throws(StorageError) in try formatUpgrading().addManifestSchema() }
    }

    func addGenerationTable(startingAt generation: UInt64) throws(VaultError) {
        try Self.converting { () throws(StorageError) in try formatUpgrading().addGenerationTable(startingAt: generation) }
    }

    private func formatUpgrading() throws(StorageError) -> any FormatUpgradingStorage {
        guard let upgrading = storage as? any FormatUpgradingStorage else { throw .schemaChanged }
        return upgrading
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
