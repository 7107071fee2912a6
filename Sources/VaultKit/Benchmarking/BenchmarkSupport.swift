import Foundation

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

    /// The row key of (`service`, `account`), which a write computes before sealing.
    public func lookupID(service: String, account: String) -> BenchmarkLookupID {
        BenchmarkLookupID(bytes: keys.lookupID(service: service, account: account))
    }

    /// One seal, exactly as a write does it (``UnlockedVault/seal(_:secret:lookupID:keys:)``):
    /// record encoding, a fresh nonce, `crypto_secretbox_easy`, the service tag.
    public func seal(_ item: VaultItem, secret: SecretBytes, lookupID: BenchmarkLookupID) -> BenchmarkSealedRecord {
        BenchmarkSealedRecord(row: UnlockedVault.seal(item, secret: secret, lookupID: lookupID.bytes, keys: keys))
    }

    /// One open: `crypto_secretbox_open_easy`, record decoding and the binding check
    /// (``UnlockedVault/openRecord(keys:lookupID:nonce:sealed:)``).
    ///
    /// - Returns: the secret's length, so the caller can consume the result.
    public func open(_ record: BenchmarkSealedRecord) throws -> Int {
        let row = record.row
        let result = row.nonce.withUnsafeBytes { nonce in
            row.sealed.withUnsafeBytes { sealed in
                Result { () throws(VaultError) in
                    try UnlockedVault.openRecord(keys: keys, lookupID: row.lookupID, nonce: nonce, sealed: sealed).2.count
                }
            }
        }
        return try result.get()
    }
}

/// The keyed-hash row key of an item, opaque to the benchmarks.
@_spi(Benchmarking)
public struct BenchmarkLookupID: Sendable {
    let bytes: [UInt8]
}

/// A sealed row (lookup id, service tag, nonce, sealed record), opaque to the benchmarks.
@_spi(Benchmarking)
public struct BenchmarkSealedRecord: Sendable {
    let row: VaultDatabase.Row

    /// Bytes of the sealed record (tag + ciphertext), without the nonce.
    public var sealedByteCount: Int { row.sealed.count }
}
