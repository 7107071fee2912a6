/// The vault-wide manifest: how a deleted row, or an older copy of a row put back, is
/// detected (docs/FORMAT.md "Manifest", docs/THREAT-MODEL.md).
///
/// Rows fall into 1,024 buckets by the first 10 bits of their lookup id (random-looking,
/// so buckets fill evenly). A bucket's digest is the sum (mod 2^256) of its rows' terms;
/// the root, kept in the header with a tag over the header too, is the sum of the
/// non-empty buckets' terms (see `ManifestHash.swift`). Every write changes the digests of the buckets it touched and
/// the root in its own transaction: O(1) per write, whatever the vault's size.
///
/// Why buckets, not one digest over all rows: a read must be checked without reading
/// the whole vault. A process verifies the root (one row per non-empty bucket, at most
/// 1,024) and then only the bucket of the item it reads (about n/1,024 rows), once;
/// both stay verified until another connection commits (the connection's snapshot
/// version, `SQLITE_FCNTL_DATA_VERSION`, read after the row's own statement), so a
/// steady stream of reads costs one file control each. Opening stays O(1).
enum Manifest {
    static let bucketBits = 10
    static let bucketCount = 1 << bucketBits

    /// The bucket of a 32-byte lookup id: its first 10 bits.
    static func bucket(of lookupID: UnsafeRawBufferPointer) -> Int {
        (Int(lookupID[0]) << 2) | (Int(lookupID[1]) >> 6)
    }

    /// Whether a row's identifying columns have the lengths FORMAT.md gives them.
    static func isRowIdentity(_ lookupIDCount: Int, _ serviceTagCount: Int, _ nonceCount: Int) -> Bool {
        lookupIDCount == 32 && serviceTagCount == 32 && nonceCount == SecretBox.nonceByteCount
    }

    static let badRow = VaultError.corrupted(reason: .invalidItemRowFieldLength)

    static func bucket(of lookupID: [UInt8]) -> Int {
        lookupID.withUnsafeBytes { bucket(of: $0) }
    }

    /// The lookup ids of `bucket` are those in `lower ..< upper` (`upper` is `nil` for
    /// the last bucket), compared as SQLite compares blobs (memcmp, then length).
    static func bounds(of bucket: Int) -> (lower: [UInt8], upper: [UInt8]?) {
        func prefix(_ bucket: Int) -> [UInt8] { [UInt8(bucket >> 2), UInt8((bucket & 3) << 6)] }
        return (prefix(bucket), bucket + 1 < bucketCount ? prefix(bucket + 1) : nil)
    }
}
