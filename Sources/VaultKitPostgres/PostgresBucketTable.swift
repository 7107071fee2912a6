/// ``PostgresRowVersions``' row versions by manifest bucket: one slot per bucket, in an
/// array, not a dictionary.
///
/// Why: every commit by another process starts a new version, which moves what vouched
/// into what is held and, once the root is verified again, back (``PostgresRowVersions/carry(unchanged:changed:)``):
/// up to every bucket, twice per commit. As a dictionary each move hashed its key, and a
/// client at four writers spent about a fifth of its CPU there (perf, 50/50 load).
struct PostgresBucketTable {
    private var slots = [PostgresRowVersions.BucketRows?](repeating: nil, count: PostgresRowVersions.bucketCount)

    subscript(_ bucket: Int) -> PostgresRowVersions.BucketRows? {
        get { slots[bucket] }
        _modify { yield &slots[bucket] }
    }

    /// The bucket's rows, made empty first if it had none.
    subscript(_ bucket: Int, default empty: @autoclosure () -> PostgresRowVersions.BucketRows) -> PostgresRowVersions.BucketRows {
        get { slots[bucket] ?? empty() }
        _modify {
            if slots[bucket] == nil { slots[bucket] = empty() }
            yield &slots[bucket]!
        }
    }

    mutating func remove(_ bucket: Int) -> PostgresRowVersions.BucketRows? {
        let rows = slots[bucket]
        slots[bucket] = nil
        return rows
    }

    mutating func removeAll() {
        for bucket in slots.indices { slots[bucket] = nil }
    }

    /// Takes every bucket `other` has (replacing its own), leaving `other` empty.
    mutating func take(_ other: inout PostgresBucketTable) {
        for bucket in slots.indices where other.slots[bucket] != nil {
            slots[bucket] = other.remove(bucket)
        }
    }
}
