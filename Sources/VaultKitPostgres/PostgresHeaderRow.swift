import VaultKit

/// The vault's header row and its host key wraps as one statement reads them
/// (``PostgresSQL/headerRow``), together with the snapshot that statement saw, the
/// session's transaction id, if it has one, and the rows' `xmin`s (the vault state of
/// ``PostgresRowVersions``).
///
/// Why one statement for all of it: a write reads the header, the manifest root, the
/// generation and the host wraps (the manifest tag covers them all) after taking the lock,
/// and a read that verifies the manifest does the same; one statement makes that one
/// round trip, and the storage keeps the row for the rest of the transaction (the row is
/// locked, or the snapshot fixed, until it ends).
struct PostgresHeaderRow {
    let snapshot: String
    /// This session's transaction, if it has been given an id (a write's lock gives it one).
    let ownTransaction: UInt64?
    private let formatVersion: Int64
    private let vaultID: [UInt8]
    private let kdfAlgorithm: String
    private let kdfSalt: [UInt8]?
    private let kdfOpsLimit: Int64
    private let kdfMemoryLimit: Int64
    private let masterKeyNonce: [UInt8]
    private let wrappedMasterKey: [UInt8]
    let masterKeyCheck: [UInt8]
    let manifestRoot: [UInt8]
    let manifestTag: [UInt8]
    private let storedGeneration: Int64
    /// In the seam's order (UTF-8 bytes of the name); `nil` when the vault never had one.
    let hostWraps: [StoredHostWrap]?
    /// The header row's and the wraps' `xmin`s.
    let vaultState: PostgresRowVersions.VaultState

    /// `nil` when the vault has no header row (no row, or ``PostgresSQL/readTransactionFirst``'s row of NULLs).
    init?(_ rows: PostgresRows) {
        guard rows.count > 0, !rows.isNull(0, 2) else { return nil }
        snapshot = rows.text(0, 0)
        ownTransaction = rows.isNull(0, 1) ? nil : UInt64(rows.text(0, 1))
        formatVersion = rows.int64(0, 2)
        vaultID = rows.array(0, 3)
        kdfAlgorithm = rows.text(0, 4)
        kdfSalt = rows.isNull(0, 5) ? nil : rows.array(0, 5)
        kdfOpsLimit = rows.int64(0, 6)
        kdfMemoryLimit = rows.int64(0, 7)
        masterKeyNonce = rows.array(0, 8)
        wrappedMasterKey = rows.array(0, 9)
        masterKeyCheck = rows.array(0, 10)
        manifestRoot = rows.array(0, 11)
        manifestTag = rows.array(0, 12)
        storedGeneration = rows.int64(0, 13)
        // Only a vault that has wraps has them in its state (``PostgresSQL/hostWrapsXmin``).
        let wrapXmins = rows.int64(0, 14) == 0 ? [] : (0..<rows.count).filter { !rows.isNull($0, 19) }.compactMap { UInt32(rows.text($0, 19)) }.sorted()
        vaultState = .init(header: PostgresRowVersions.xid(rows.text(0, 18)),
                           hostWraps: wrapXmins.isEmpty ? nil : wrapXmins.map(String.init).joined(separator: ","),
                           hasHostWraps: rows.int64(0, 14) != 0)
        if rows.int64(0, 14) == 0 {
            hostWraps = nil
        } else {
            let wraps = (0..<rows.count).filter { !rows.isNull($0, 15) }.map { row in
                StoredHostWrap(name: rows.text(row, 15), publicKey: rows.array(row, 16), sealedMasterKey: rows.array(row, 17))
            }
            // The seam's order is UTF-8 bytes of the name, whatever the database's collation.
            hostWraps = wraps.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        }
    }

    /// The header, checked as the file vault checks its own.
    func header() throws(StorageError) -> VaultHeader {
        let version = Int(formatVersion)
        guard version <= VaultHeader.currentFormatVersion else { throw .unsupportedFormatVersion(version) }
        guard version >= 1 else { throw .corrupted(reason: .invalidFormatVersion) }
        let keySource: VaultHeader.KeySource
        switch kdfAlgorithm {
        case "argon2id13":
            guard let kdfSalt, kdfOpsLimit > 0, kdfMemoryLimit > 0,
                  let parameters = try? KDFParameters(opsLimit: UInt64(kdfOpsLimit), memoryLimit: Int(kdfMemoryLimit))
            else { throw .corrupted(reason: .kdfParametersOutOfBounds) }
            keySource = .passphrase(salt: kdfSalt, parameters: parameters)
        case "raw":
            keySource = .rawKey
        default:
            throw .corrupted(reason: .unknownKDFAlgorithm)
        }
        return try VaultHeader(
            formatVersion: version, vaultID: vaultID, keySource: keySource,
            masterKeyNonce: masterKeyNonce, wrappedMasterKey: wrappedMasterKey, masterKeyCheck: masterKeyCheck
        ).validated()
    }

    func generation() throws(StorageError) -> UInt64 {
        guard storedGeneration >= 0 else { throw .generationInvalid }
        return UInt64(storedGeneration)
    }
}
