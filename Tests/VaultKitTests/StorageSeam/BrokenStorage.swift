import Foundation
@testable import VaultKit

/// A storage that breaks one guarantee of ``VaultStorage``'s contract, wrapping a good
/// one: what the contract's checks (StorageContract) are shown to catch, one defect each.
final class BrokenStorage: VaultStorage, @unchecked Sendable {
    enum Defect: CaseIterable {
        /// Scans visit rows in the order they were stored, not by lookup id.
        case scansInStorageOrder
        /// The snapshot version never moves.
        case versionNeverMoves
        /// Write transactions take no lock and write as they go (autocommit): no
        /// exclusivity, no isolation, no rollback.
        case noTransactions
        /// Writes are queued until commit and reads do not look at the queue (a MULTI
        /// without read-your-own-writes).
        case readsMissOwnWrites
        /// A body that throws still commits what it wrote.
        case commitsOnThrow
        /// An insert replaces a row that exists.
        case insertReplaces
        /// An empty bucket reads back as an all-zero digest rather than none.
        case storesEmptyBuckets
    }

    private let inner: any VaultStorage
    private let defect: Defect
    /// ``Defect/readsMissOwnWrites``'s queue of row writes, sent at commit.
    private var queuedRows: [StoredRow]?

    init(_ inner: any VaultStorage, defect: Defect) {
        self.inner = inner
        self.defect = defect
    }

    var location: String { inner.location }
    var vaultLocation: Vault.Location { inner.vaultLocation }
    var snapshotVersion: Int64 { defect == .versionNeverMoves ? 1 : inner.snapshotVersion }

    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError) { try inner.createVault(header: header, manifestTag: manifestTag) }
    func checkSchema(formatVersion: Int) throws(StorageError) { try inner.checkSchema(formatVersion: formatVersion) }

    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result {
        switch defect {
        case .noTransactions:
            return try StorageFailure.passing(body)
        case .commitsOnThrow:
            let outcome: Swift.Result<Result, BodyError>
            do {
                // The body's failure is kept aside, so the transaction commits what it wrote.
                outcome = try inner.writeTransaction { () throws(StorageError) in Swift.Result { () throws(BodyError) in try body() } }
            } catch {
                throw .storage(error.flattened)
            }
            return try StorageFailure.passing { () throws(BodyError) in try outcome.get() }
        case .readsMissOwnWrites:
            do {
                return try sendingQueuedRowsAtCommit(body)
            } catch {
                switch error {
                case .storage(let failure): throw .storage(failure)
                case .body(let failure): throw failure
                }
            }
        default:
            return try inner.writeTransaction(body)
        }
    }

    private func sendingQueuedRowsAtCommit<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<StorageFailure<BodyError>>) -> Result {
            try inner.writeTransaction { () throws(StorageFailure<BodyError>) -> Result in
                queuedRows = []
                defer { queuedRows = nil }
                let result = try StorageFailure.passing(body)
                for row in queuedRows ?? [] {
                    try StorageFailure<BodyError>.lift { () throws(StorageError) in
                        try withRawBytes(row.nonce) { (nonce) throws(StorageError) in try inner.upsert(lookupID: row.lookupID, serviceTag: row.serviceTag, nonce: nonce, sealed: row.sealed) }
                    }
                }
                return result
            }
    }

    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result { try inner.readTransaction(body) }
    func pinSnapshot() throws(StorageError) { try inner.pinSnapshot() }

    func readHeader() throws(StorageError) -> VaultHeader { try inner.readHeader() }
    func readMasterKeyCheck() throws(StorageError) -> [UInt8] { try inner.readMasterKeyCheck() }
    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError) { try inner.updateKeyWrapping(header) }
    func setFormatVersion(_ version: Int) throws(StorageError) { try inner.setFormatVersion(version) }

    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8], _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result? { try inner.withSealedItem(lookupID: lookupID, body) }

    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try inner.forEachRow(serviceTag: serviceTag, body)
    }

    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) {
        guard defect == .scansInStorageOrder else { return try inner.forEachRowIdentity(in: range, body) }
        var rows: [StoredRow] = []
        do {
            try inner.forEachRowIdentity(in: range) { (id, tag, nonce) throws(StorageError) in
                rows.append(StoredRow(lookupID: Array(id), serviceTag: Array(tag), nonce: Array(nonce), sealed: []))
            }
        } catch {
            throw .storage(error.flattened)
        }
        // "Storage order": here, by nonce, which has nothing to do with the id.
        for row in rows.sorted(by: { $0.nonce.lexicographicallyPrecedes($1.nonce) }).reversed() {
            try withRawBytes(row.lookupID) { (id) throws(StorageFailure<BodyError>) in
                try withRawBytes(row.serviceTag) { (tag) throws(StorageFailure<BodyError>) in
                    try withRawBytes(row.nonce) { (nonce) throws(StorageFailure<BodyError>) in try StorageFailure.passing { () throws(BodyError) in try body(id, tag, nonce) } }
                }
            }
        }
    }

    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) {
        if queuedRows != nil {
            queuedRows?.append(StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array(nonce), sealed: sealed))
            return
        }
        try inner.upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool {
        if defect == .insertReplaces || queuedRows != nil {
            try upsert(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
            return true
        }
        return try inner.insertIfAbsent(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])? { try inner.delete(lookupID: lookupID) }

    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int { try inner.deleteAll(serviceTag: serviceTag, body) }

    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?) { try inner.readManifestRoot() }
    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError) {
        try inner.writeManifestRoot(root, tag: tag, generation: generation)
    }
    func readGeneration() throws(StorageError) -> UInt64 { try inner.readGeneration() }
    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]? {
        guard defect == .storesEmptyBuckets else { return try inner.manifestDigest(bucket: bucket) }
        return try inner.manifestDigest(bucket: bucket) ?? Array(repeating: 0, count: 32)
    }
    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError) { try inner.setManifestDigest(bucket: bucket, digest) }
    func forEachManifestBucket<BodyError: Error>(_ body: (Int64, UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>) {
        try inner.forEachManifestBucket(body)
    }
    func deleteAllManifestBuckets() throws(StorageError) { try inner.deleteAllManifestBuckets() }

    func readHostWraps() throws(StorageError) -> [StoredHostWrap]? { try inner.readHostWraps() }
    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError) { try inner.replaceHostWraps(wraps) }
}

/// `bytes.withUnsafeBytes` keeping `body`'s typed error (Array's rethrows untyped).
private func withRawBytes<Value, Failure: Error>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value) throws(Failure) -> Value {
    try bytes.withUnsafeBytes { pointer in Result { () throws(Failure) in try body(pointer) } }.get()
}
