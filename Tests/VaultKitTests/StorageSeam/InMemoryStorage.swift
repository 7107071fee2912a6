import Foundation
@testable import VaultKit

/// A second ``VaultStorage``: the vault's rows in memory, no SQLite anywhere.
///
/// It exists to prove the seam is real (the engine runs on it unchanged) and to be the
/// reference an engine for another database is held to: what it does is what the
/// protocol's contract asks, and no more. ``tamper(_:)`` plays another connection that
/// commits behind the engine's back.
///
/// `@unchecked Sendable` so a test can hand it to a ``Vault`` and keep tampering with it:
/// each test uses its own instance from one thread, between the engine's calls.
final class InMemoryStorage: VaultStorage, @unchecked Sendable {
    /// Everything one committed state holds.
    struct Contents {
        var header: VaultHeader?
        var manifestRoot: [UInt8]?
        var manifestTag: [UInt8]?
        var generation: UInt64?
        var rows: [[UInt8]: StoredRow] = [:]
        var buckets: [Int64: [UInt8]] = [:]
        /// `nil` until the first host is added, as a table that does not exist yet.
        var hostWraps: [StoredHostWrap]?
    }

    let location: String
    /// Not a file: the tests' reference storage, named like an engine's URL.
    var vaultLocation: Vault.Location { .engine(url: location) }
    private(set) var committed = Contents()
    /// The write transaction's copy, published on commit and dropped on rollback.
    private var pending: Contents?
    /// One more for every commit, by the engine or by ``tamper(_:)``.
    private(set) var snapshotVersion: Int64 = 0

    init(location: String = "memory:vault") {
        self.location = location
    }

    /// Commits `change` as another connection would: the engine's next read sees a new version.
    func tamper(_ change: (inout Contents) -> Void) {
        change(&committed)
        snapshotVersion += 1
    }

    private var current: Contents {
        get { pending ?? committed }
        set { if pending != nil { pending = newValue } else { committed = newValue } }
    }

    // MARK: Creating and checking

    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) {
        guard committed.header == nil else { throw .io(path: location, errno: EEXIST) }
        do {
            try writeTransaction { () throws(StorageError) in
                current.header = header
                current.generation = 0
                try writeManifestRoot(.zero, tag: manifestTag, generation: 0)
            }
        } catch {
            throw error.flattened
        }
    }

    /// Memory holds only the current format's layout, so any other is not this storage's.
    func checkSchema(formatVersion: Int) throws(StorageError) {
        guard formatVersion == VaultHeader.currentFormatVersion else { throw .schemaChanged }
    }

    // MARK: Transactions

    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        guard pending == nil else { throw .storage(.busy(location: location)) }
        pending = committed
        do {
            let result = try StorageFailure.passing(body)
            committed = pending!
            pending = nil
            snapshotVersion += 1
            return result
        } catch {
            pending = nil
            throw error
        }
    }

    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        // One thread, and tamper(_:) runs between engine calls: every read is one snapshot.
        return try StorageFailure.passing(body)
    }

    func pinSnapshot() throws(StorageError) {}

    // MARK: Header

    func readHeader() throws(StorageError) -> VaultHeader {
        guard let header = current.header else { throw .corrupted(reason: .missingHeader) }
        guard header.formatVersion <= VaultHeader.currentFormatVersion else { throw .unsupportedFormatVersion(header.formatVersion) }
        return try header.validated()
    }

    func readMasterKeyCheck() throws(StorageError) -> [UInt8] {
        try readHeader().masterKeyCheck
    }

    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) {
        guard var stored = current.header else { throw .corrupted(reason: .missingHeader) }
        stored.keySource = header.keySource
        stored.masterKeyNonce = header.masterKeyNonce
        stored.wrappedMasterKey = header.wrappedMasterKey
        stored.masterKeyCheck = header.masterKeyCheck
        current.header = stored
    }

    func setFormatVersion(_ version: Int) throws(StorageError) {
        current.header?.formatVersion = version
    }

    // MARK: Host key wraps

    func readHostWraps() throws(StorageError) -> [StoredHostWrap]? {
        current.hostWraps
    }

    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) {
        current.hostWraps = wraps
    }

    // MARK: Items

    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? {
        guard let row = current.rows[lookupID] else { return nil }
        return try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(row.serviceTag, row.nonce, row.sealed, body) }
    }

    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        for row in current.rows.values where serviceTag == nil || row.serviceTag == serviceTag {
            try StorageFailure.passing { () throws(BodyError) in try body(row) }
        }
    }

    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        // Byte order then length, as the contract (and SQLite's blob comparison) has it.
        let ids = current.rows.keys.sorted { $0.lexicographicallyPrecedes($1) }.filter { id in
            guard let range else { return true }
            return !id.lexicographicallyPrecedes(range.lower) && (range.upper.map { id.lexicographicallyPrecedes($0) } ?? true)
        }
        for id in ids {
            let row = current.rows[id]!
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(id, row.serviceTag, row.nonce, body) }
        }
    }

    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        current.rows[lookupID] = StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array(nonce), sealed: sealed)
    }

    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        guard current.rows[lookupID] == nil else { return false }
        try upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
        return true
    }

    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? {
        guard let row = current.rows.removeValue(forKey: lookupID) else { return nil }
        return (row.serviceTag, row.nonce)
    }

    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int {
        let doomed = current.rows.values.filter { serviceTag == nil || $0.serviceTag == serviceTag }
        for row in doomed {
            current.rows[row.lookupID] = nil
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(row.lookupID, row.serviceTag, row.nonce, body) }
        }
        return doomed.count
    }

    // MARK: Manifest and generation

    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) {
        guard current.header != nil else { throw .corrupted(reason: .missingHeader) }
        return (current.manifestRoot, current.manifestTag)
    }

    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        current.manifestRoot = root.bytes
        current.manifestTag = tag.bytes
        current.generation = generation
    }

    func readGeneration() throws(StorageError) -> UInt64 {
        guard let generation = current.generation else { throw .generationMissing }
        return generation
    }

    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        current.buckets[Int64(bucket)]
    }

    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) {
        current.buckets[Int64(bucket)] = digest.isZero ? nil : digest.bytes
    }

    func forEachManifestBucket<BodyError: Error>(_ body: (Int64, UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        for (bucket, digest) in current.buckets {
            try StorageFailure.passing { () throws(BodyError) in try Self.withBytes(digest, [], []) { (bytes, _, _) throws(BodyError) in try body(bucket, bytes) } }
        }
    }

    func deleteAllManifestBuckets() throws(StorageError) {
        current.buckets = [:]
    }

    // MARK: Plumbing

    private static func withBytes<Value, BodyError: Error>(
        _ first: [UInt8], _ second: [UInt8], _ third: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Value
    ) throws(BodyError) -> Value {
        // Array's withUnsafeBytes rethrows untyped: carry the typed error out in a Result.
        let result = first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                third.withUnsafeBytes { c in Result { () throws(BodyError) in try body(a, b, c) } }
            }
        }
        return try result.get()
    }
}
