/// A lone `set` prepared entirely before its transaction, from what the engine verified
/// and kept (``VerifiedBuckets``): the new row, and the bucket digest and header root it leads
/// to, with the state each replaces. A storage whose every call is a round trip sends
/// it in one (``PreparedSetStorage/commit(_:)``); it commits only where the stored
/// rows are exactly the ones it was prepared from.
///
/// Why the replaced state travels with it: the engine wrote it from a cache, and the
/// database may have moved on since (another host's write, an attacker's change). The
/// storage compares, under the write lock, the header's generation and tag, the row in
/// the item's place and the bucket's digest with these; any difference and nothing is
/// written, so a prepared `set` can only ever do what the same `set` read afresh would.
package struct PreparedSet {
    /// The item's new row.
    package var row: StoredRow
    /// The nonce of the row it replaces; `nil`: no row is in its place.
    package var replacedNonce: [UInt8]?
    package var bucket: Int
    /// The bucket's digest before and after; `nil`: the bucket has no row.
    package var digestBefore: [UInt8]?
    package var digestAfter: [UInt8]?
    /// The header's generation and manifest tag before.
    package var generationBefore: UInt64
    package var tagBefore: [UInt8]
    /// The header's manifest root, tag and generation after.
    package var root: [UInt8]
    package var tag: [UInt8]
    package var generation: UInt64

    /// A `set` that keeps the item it writes over as a version (docs/FORMAT.md section 14)
    /// writes these too, in the same call, each checked under the lock as the item is:
    /// the kept version's row (its lookup id must be free), the version the retention
    /// trims (it must hold this nonce), no row of an unnumbered item's history tag, the
    /// settings row the retention was read from (this nonce; `nil`: none), and the digests
    /// of the other buckets they change.
    package var version: StoredRow?
    package var trimmed: (lookupID: [UInt8], nonce: [UInt8])?
    package var noRowsOfServiceTag: [UInt8]?
    package var settings: (lookupID: [UInt8], nonce: [UInt8]?)?
    package var otherBuckets: [(bucket: Int, before: [UInt8]?, after: [UInt8]?)] = []

    package init(
        row: StoredRow, replacedNonce: [UInt8]?, bucket: Int, digestBefore: [UInt8]?, digestAfter: [UInt8]?,
        generationBefore: UInt64, tagBefore: [UInt8], root: [UInt8], tag: [UInt8], generation: UInt64
    ) {
        self.row = row
        self.replacedNonce = replacedNonce
        self.bucket = bucket
        self.digestBefore = digestBefore
        self.digestAfter = digestAfter
        self.generationBefore = generationBefore
        self.tagBefore = tagBefore
        self.root = root
        self.tag = tag
        self.generation = generation
    }

    /// What a storage did with a prepared `set`.
    package enum Outcome: Equatable {
        /// Written and committed. `versionBefore` is the snapshot version the write lock
        /// saw (``VaultStorage/snapshotVersion`` is the version after the commit): what
        /// reads rely on survives the commit only if that is the version the engine last
        /// verified at; the kept rows survive either way.
        case committed(versionBefore: Int64)
        /// Not written: the stored state was not the one it was prepared from.
        case stale
    }
}
