#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Why this file exists: the Benchmarks package (a separate package, so library users
// never resolve package-benchmark) must time the *production* record sealing and
// opening against raw libsodium, and those functions are internal. `@_spi(Benchmarking)`
// makes exactly these two entry points visible to a client that writes
// `@_spi(Benchmarking) import VaultKit`, and to no one else: they are not part of the
// public API, carry no stability promise, and hand out no key material.

/// Seals and opens item records with the same code a ``Vault`` runs, under a fresh
/// random master key held only in memory (no file, no SQLite).
@_spi(Benchmarking)
public struct BenchmarkRecordSealer: Sendable {
    private let keys: KeyHierarchy

    /// A sealer with a new random master key and its derived subkeys.
    public init() throws {
        try Sodium.ensureInitialized()
        keys = KeyHierarchy(masterKey: KeyHierarchy.randomMasterKey())
    }

    /// The index hashes a write computes before sealing: the row key of
    /// (`service`, `account`) and the service tag, one keyed BLAKE2b each.
    public func index(service: String, account: String) -> BenchmarkIndex {
        BenchmarkIndex(
            service: service, account: account,
            lookupID: keys.lookupID(service: service, account: account),
            serviceTag: keys.serviceTag(service: service)
        )
    }

    /// One record seal, exactly as a write does it after computing the index
    /// (``UnlockedVault/seal(_:secret:provenance:lookupID:serviceTag:keys:)``): record encoding, a
    /// fresh nonce, `crypto_secretbox_easy` in place in the output array.
    public func seal(_ item: VaultItem, secret: SecretBytes, index: BenchmarkIndex) -> BenchmarkSealedRecord {
        BenchmarkSealedRecord(row: UnlockedVault.seal(item, secret: secret, provenance: RecordProvenance(number: 1, writer: VaultWriter.defaultName, operation: .set, archive: nil), lookupID: index.lookupID, serviceTag: index.serviceTag, keys: keys))
    }

    /// One record open, exactly as a `get` does it
    /// (``UnlockedVault/openRecord(keys:lookupID:expected:version:nonce:sealed:)``):
    /// `crypto_secretbox_open_easy`, record decoding, the binding check against the names
    /// the row was looked up by.
    ///
    /// - Returns: the secret's length, so the caller can consume the result.
    public func open(_ record: BenchmarkSealedRecord, index: BenchmarkIndex) throws -> Int {
        let row = record.row
        let result = row.nonce.withUnsafeBytes { (nonce) -> Result<Int, VaultError> in
            row.sealed.withUnsafeBytes { sealed in
                Result { () throws(VaultError) in
                    try UnlockedVault.openRecord(
                        keys: keys, lookupID: row.lookupID, expected: (index.service, index.account),
                        nonce: nonce, sealed: sealed
                    ).2.count
                }
            }
        }
        return try result.get()
    }
}

/// The names of an item and their keyed hashes (row key, service tag), opaque to the benchmarks.
@_spi(Benchmarking)
public struct BenchmarkIndex: Sendable {
    let service: String
    let account: String
    let lookupID: [UInt8]
    let serviceTag: [UInt8]
}

/// A sealed row (lookup id, service tag, nonce, sealed record), opaque to the benchmarks.
@_spi(Benchmarking)
public struct BenchmarkSealedRecord: Sendable {
    let row: UnlockedVault.SealedItem

    /// Bytes of the sealed record (tag + ciphertext), without the nonce.
    public var sealedByteCount: Int { row.sealed.count }
}
