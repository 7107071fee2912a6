#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The checks every row of a scan in lookup id order passes before its manifest term
/// counts: its identifying columns have their lengths, and its lookup id is greater than
/// the one before. A lookup id seen twice (a table rebuilt without its primary key, or
/// pages edited by hand) shows as one not greater, and is refused: the sum would count
/// both, but a read by key finds one.
struct OrderedRowScan {
    private var previous = [UInt8](repeating: 0, count: 32)
    private var isFirst = true

    /// The row's manifest term, once it passed the checks.
    mutating func term(
        _ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, keys: KeyHierarchy
    ) throws(VaultError) -> ManifestDigest {
        if let failure = admit(lookupID, serviceTagCount: serviceTag.count, nonceCount: nonce.count) { throw failure }
        return keys.manifestItemTerm(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce)
    }

    /// The same for a row read whole.
    mutating func term(of row: StoredRow, keys: KeyHierarchy) throws(VaultError) -> ManifestDigest {
        let failure = row.lookupID.withUnsafeBytes { admit($0, serviceTagCount: row.serviceTag.count, nonceCount: row.nonce.count) }
        if let failure { throw failure }
        return Self.term(of: row, keys: keys)
    }

    /// A row's manifest term, unchecked (a row this process sealed or already checked).
    static func term(of row: StoredRow, keys: KeyHierarchy) -> ManifestDigest {
        row.lookupID.withUnsafeBytes { lookupID in
            row.serviceTag.withUnsafeBytes { serviceTag in
                row.nonce.withUnsafeBytes { keys.manifestItemTerm(lookupID: lookupID, serviceTag: serviceTag, nonce: $0) }
            }
        }
    }

    private mutating func admit(_ lookupID: UnsafeRawBufferPointer, serviceTagCount: Int, nonceCount: Int) -> VaultError? {
        guard Manifest.isRowIdentity(lookupID.count, serviceTagCount, nonceCount) else { return Manifest.badRow }
        let ascending = previous.withUnsafeBytes { memcmp($0.baseAddress!, lookupID.baseAddress!, 32) < 0 }
        guard isFirst || ascending else { return .tampered(reason: .rowStoredTwice) }
        isFirst = false
        previous.withUnsafeMutableBytes { $0.copyMemory(from: lookupID) }
        return nil
    }
}
