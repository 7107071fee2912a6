import Foundation
@testable import VaultKit

/// A ``VaultStorage`` on ``KeyValueServer``, as one would be written for Redis: proof that
/// the seam's guide (docs/ARCHITECTURE.md, "Adding a storage engine") is enough for an
/// engine with no SQL, no schema and no read-your-own-writes of its own.
///
/// - The write lock is a lock key taken `NX` (``KeyValueDatabase/acquireLock(owner:timeout:)``),
///   waited for up to the busy timeout, then ``StorageError/busy(location:)``.
/// - A transaction reads one snapshot, taken when it starts; a write transaction queues its
///   writes (MULTI) and sends them at commit (EXEC), or drops them on a throw (DISCARD).
///   Its reads look in the queue first: that is its read-your-own-writes.
/// - ``snapshotVersion`` is the server's commit count: a true counter.
/// - It has no schema; ``checkSchema(formatVersion:)`` checks the keys are all the layout's.
///
/// A connection is used by one thread at a time (the ``Vault``'s mutex), hence `@unchecked Sendable`.
final class KeyValueStorage: VaultStorage, @unchecked Sendable {
    let location: String
    var vaultLocation: Vault.Location { .engine(url: location) }
    private let database: KeyValueDatabase
    private let busyTimeout: Duration
    /// The committed state the open transaction reads.
    private var snapshot: [String: [UInt8]]?
    /// The open write transaction's queued writes (`nil` deletes), `nil` outside one.
    private var queued: [String: [UInt8]?]?
    private(set) var snapshotVersion: Int64 = 0

    init(location: String, database: KeyValueDatabase, busyTimeout: Duration) {
        self.location = location
        self.database = database
        self.busyTimeout = busyTimeout
    }

    // MARK: Reading and writing keys

    private func get(_ key: String) -> [UInt8]? {
        if let entry = queued?[key] { return entry }
        return committed()[key]
    }

    /// The keys starting with `prefix`, the queue's included, its deletions excluded.
    private func keys(prefix: String) -> [String] {
        var keys = Set(committed().keys.filter { $0.hasPrefix(prefix) })
        for (key, value) in queued ?? [:] where key.hasPrefix(prefix) {
            if value == nil { keys.remove(key) } else { keys.insert(key) }
        }
        return Array(keys)
    }

    private func put(_ key: String, _ value: [UInt8]?) {
        if queued != nil {
            queued![key] = .some(value)
        } else {
            snapshotVersion = database.exec([key: value])
        }
    }

    /// The transaction's snapshot, or outside one a fresh read of its own.
    private func committed() -> [String: [UInt8]] {
        if let snapshot { return snapshot }
        let (values, version) = database.snapshot()
        snapshotVersion = version
        return values
    }

    // MARK: Creating and checking

    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        do {
            try writeTransaction { () throws(StorageError) in
                guard get(KeyValueLayout.header) == nil else { throw .alreadyExists(location: location) }
                put(KeyValueLayout.header, KeyValueLayout.encode(header))
                try writeManifestRoot(.zero, tag: manifestTag, generation: 0)
            }
        } catch {
            throw error.flattened
        }
    }

    /// No schema: the layout is the set of keys, so any other key is a changed schema, and
    /// a `memkv` vault exists only in the current format.
    func checkSchema(formatVersion: Int) throws(StorageError) {
        let values = committed()
        guard formatVersion == VaultHeader.currentFormatVersion, values.keys.allSatisfy(KeyValueLayout.isLayoutKey) else { throw .schemaChanged }
    }

    // MARK: Transactions

    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        guard queued == nil else { return try StorageFailure.passing(body) }
        let owner = ObjectIdentifier(self)
        guard database.acquireLock(owner: owner, timeout: busyTimeout) else { throw .storage(.busy(location: location)) }
        defer { database.releaseLock(owner: owner) }
        let (values, version) = database.snapshot()
        (snapshot, snapshotVersion, queued) = (values, version, [:])
        defer { (snapshot, queued) = (nil, nil) }
        let result = try StorageFailure.passing(body)
        snapshotVersion = database.exec(queued ?? [:])
        return result
    }

    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        guard snapshot == nil else { return try StorageFailure.passing(body) }
        let (values, version) = database.snapshot()
        (snapshot, snapshotVersion) = (values, version)
        defer { snapshot = nil }
        return try StorageFailure.passing(body)
    }

    /// The snapshot is taken when the transaction starts.
    func pinSnapshot() throws(StorageError) {}

    // MARK: Header

    func readHeader() throws(StorageError) -> VaultHeader {
        guard let bytes = get(KeyValueLayout.header) else { throw .notFound(location: location) }
        let header = try KeyValueLayout.decodeHeader(bytes)
        guard header.formatVersion <= VaultHeader.currentFormatVersion else { throw .unsupportedFormatVersion(header.formatVersion) }
        return try header.validated()
    }

    func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try readHeader().masterKeyCheck
    }

    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        var stored = try readHeader()
        stored.keySource = header.keySource
        stored.masterKeyNonce = header.masterKeyNonce
        stored.wrappedMasterKey = header.wrappedMasterKey
        stored.masterKeyCheck = header.masterKeyCheck
        put(KeyValueLayout.header, KeyValueLayout.encode(stored))
    }

    func setFormatVersion(_ version: Int) throws(StorageError) {
        var stored = try readHeader()
        stored.formatVersion = version
        put(KeyValueLayout.header, KeyValueLayout.encode(stored))
    }

    // MARK: Items

    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        guard let bytes = get(KeyValueLayout.itemKey(lookupID)) else { return nil }
        let row = try StorageFailure<BodyError>.lift { () throws(StorageError) in try KeyValueLayout.decodeRow(lookupID, bytes) }
        return try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(row.serviceTag, row.nonce, row.sealed, body) }
    }

    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        for row in try StorageFailure<BodyError>.lift({ () throws(StorageError) in try rows(in: nil) }) where serviceTag == nil || row.serviceTag == serviceTag {
            try StorageFailure.passing { () throws(BodyError) in try body(row) }
        }
    }

    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        for row in try StorageFailure<BodyError>.lift({ () throws(StorageError) in try rows(in: range) }) {
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(row.lookupID, row.serviceTag, row.nonce, body) }
        }
    }

    /// The rows in lookup id order (bytes unsigned, then length), within `range` if given.
    private func rows(in range: (lower: [UInt8], upper: [UInt8]?)?) throws(StorageError) -> [StoredRow] {
        var rows: [StoredRow] = []
        for key in keys(prefix: KeyValueLayout.itemPrefix) {
            guard let id = KeyValueLayout.lookupID(ofItemKey: key), let bytes = get(key) else { continue }
            if let range {
                guard !id.lexicographicallyPrecedes(range.lower), range.upper.map({ id.lexicographicallyPrecedes($0) }) ?? true else { continue }
            }
            rows.append(try KeyValueLayout.decodeRow(id, bytes))
        }
        return rows.sorted { $0.lookupID.lexicographicallyPrecedes($1.lookupID) }
    }

    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        put(KeyValueLayout.itemKey(lookupID), KeyValueLayout.encode(StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array(nonce), sealed: sealed)))
    }

    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        guard get(KeyValueLayout.itemKey(lookupID)) == nil else { return false }
        try upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
        return true
    }

    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        let key = KeyValueLayout.itemKey(lookupID)
        guard let bytes = get(key) else { return nil }
        let row = try KeyValueLayout.decodeRow(lookupID, bytes)
        put(key, nil)
        return (row.serviceTag, row.nonce)
    }

    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        let doomed = try StorageFailure<BodyError>.lift { () throws(StorageError) in try rows(in: nil) }.filter { serviceTag == nil || $0.serviceTag == serviceTag }
        for row in doomed {
            put(KeyValueLayout.itemKey(row.lookupID), nil)
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(row.lookupID, row.serviceTag, row.nonce, body) }
        }
        return doomed.count
    }

    // MARK: Manifest and generation

    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        guard get(KeyValueLayout.header) != nil else { throw .notFound(location: location) }
        return (get(KeyValueLayout.manifestRoot), get(KeyValueLayout.manifestTag))
    }

    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        put(KeyValueLayout.manifestRoot, root.bytes)
        put(KeyValueLayout.manifestTag, tag.bytes)
        put(KeyValueLayout.generation, KeyValueLayout.number(generation))
    }

    func readGeneration() throws(StorageError) -> UInt64 {
        guard let bytes = get(KeyValueLayout.generation) else { throw .generationMissing }
        guard let generation = KeyValueLayout.number(bytes), generation <= UInt64(Int64.max) else { throw .generationInvalid }
        return generation
    }

    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        get(KeyValueLayout.bucketKey(Int64(bucket)))
    }

    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        put(KeyValueLayout.bucketKey(Int64(bucket)), digest.isZero ? nil : digest.bytes)
    }

    func forEachManifestBucket<BodyError: Error>(_ body: (Int64, UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        for key in keys(prefix: KeyValueLayout.bucketPrefix) {
            guard let bucket = Int64(key.dropFirst(KeyValueLayout.bucketPrefix.count)), let digest = get(key) else {
                throw .storage(.corrupted(reason: .invalidManifestBucket))
            }
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(digest, [], []) { (bytes, _, _) throws(BodyError) in try body(bucket, bytes) } }
        }
    }

    func deleteAllManifestBuckets() throws(StorageError) {
        for key in keys(prefix: KeyValueLayout.bucketPrefix) { put(key, nil) }
    }

    // MARK: Host key wraps

    func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        guard let bytes = get(KeyValueLayout.hostWraps) else { return nil }
        // Kept in UTF-8 byte order of name, as the contract asks whatever the store's order.
        return try KeyValueLayout.decodeHostWraps(bytes).sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        put(KeyValueLayout.hostWraps, KeyValueLayout.encode(wraps))
    }

    // MARK: Plumbing

    private static func withBytes<Value, BodyError: Error>(
        _ first: [UInt8], _ second: [UInt8], _ third: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Value
    ) throws(BodyError) -> Value {
        let result = first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                third.withUnsafeBytes { c in Result { () throws(BodyError) in try body(a, b, c) } }
            }
        }
        return try result.get()
    }
}
