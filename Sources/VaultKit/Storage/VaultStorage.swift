/// The seam between the vault engine and the storage it runs on: rows in, rows out.
///
/// The engine (`Vault/`: keys, records, the manifest, format upgrades) calls only
/// this protocol; ``VaultDatabase`` (one SQLite file) is its first implementation.
/// A storage knows nothing of keys or records: it keeps opaque bytes in five places,
/// laid out by docs/FORMAT.md, and answers in its own error type (``StorageError``).
///
/// - the **header**: one row (``VaultHeader``), plus the manifest root and its tag;
/// - the **item rows**, keyed by a 32-byte lookup id, each with a service tag, a nonce
///   and a sealed record;
/// - the **manifest buckets**: bucket number -> 32-byte digest, no row for an empty one;
/// - the **generation**: one counter, written with the root.
/// - the **host key wraps**: name -> public key and sealed master key, absent until the
///   first host is added.
///
/// What an implementation must guarantee (the engine's integrity rests on it; each point
/// is a check of Tests/StorageConformance, `StorageContract` and `StorageConformance`):
/// - ``writeTransaction(_:)`` holds an exclusive write lock for its whole body (so a
///   read-then-write cannot race another writer; a second writer waits up to the busy
///   timeout, then fails with ``StorageError/busy(location:)``), commits durably, and rolls
///   back every change when the body throws, whose error comes back unchanged;
/// - **read-your-own-writes**: inside ``writeTransaction(_:)`` every read sees the
///   transaction's own writes (a second `add` in one batch must see the first). A store
///   whose transactions only queue writes (Redis MULTI) must build this on top;
/// - isolation: no other connection sees a write transaction's changes before it commits;
/// - ``readTransaction(_:)`` reads one consistent snapshot, and inside a write
///   transaction simply runs in it;
/// - ``snapshotVersion`` names the snapshot the last read saw: it stays the same while
///   nothing commits, and changes on every commit that writes the header (this
///   connection's or, once seen, another's; every engine write does). A commit of item
///   rows alone, which only someone behind the engine's back makes, may leave it
///   unchanged only if the storage reports such a row as a new version when a lone read
///   (outside a transaction) meets it (PostgreSQL compares row versions, FORMAT.md 13.1;
///   SQLite's and the tests' versions move on every commit). It may repeat an earlier
///   value only with negligible probability (PostgreSQL's is a 63-bit hash of the state):
///   the engine keeps what it verified for exactly as long as the version is equal;
/// - ``forEachRowIdentity(in:_:)`` visits rows in ascending lookup id order, comparing
///   ids as `memcmp` then length, and does not hide a row stored twice;
/// - one row per lookup id (``insertIfAbsent(lookupID:serviceTag:nonce:sealed:)`` never
///   replaces), and an empty bucket is stored as none.
///
/// Errors: ``StorageError/notFound(location:)`` when opening finds no vault,
/// ``StorageError/alreadyExists(location:)`` when creating finds one,
/// ``StorageError/busy(location:)`` for a lock not had in time,
/// ``StorageError/unavailable(location:errno:)`` for a server not reached or refusing,
/// ``StorageError/schemaChanged`` for a layout not exactly the format's,
/// ``StorageError/corrupted(reason:)`` for stored bytes that do not parse. None carries
/// row contents or a password.
///
/// Optional capabilities, each switching on one thing in the engine: ``GatheringInsertStorage``,
/// ``OpeningInsertStorage``, ``PreparedSetStorage`` (fewer round trips for a database
/// server), ``DurabilityBarrierStorage`` (commits readable before they are durable),
/// ``FormatUpgradingStorage`` (vaults of older formats), and ``sharedLock(named:)``.
///
/// Calls are blocking and made by one thread at a time (the ``Vault``'s mutex). A
/// storage whose driver is asynchronous bridges inside the implementation; see
/// docs/ARCHITECTURE.md, "The storage seam".
package protocol VaultStorage: AnyObject {
    /// Where the vault lives, as errors name it: a file path for SQLite, the URL without
    /// its password for an engine reached by URL (``VaultEngineLocation``). Never holds a
    /// secret. It is ``vaultLocation``'s `description`.
    var location: String { get }

    /// What the storage is, as ``Vault/location`` shows it to the library's user: a file
    /// (``Vault/Location/file(path:)``), or a vault of an engine reached by URL
    /// (``Vault/Location/engine(url:)``, without the password). Each storage says which,
    /// so a caller never guesses it from the text (VaultAuth's refresh lock is a file
    /// beside a vault file only).
    var vaultLocation: Vault.Location { get }

    // MARK: Creating and checking

    /// Writes a new vault (schema, header, generation 0, empty manifest under
    /// `manifestTag`) into empty storage, in one transaction.
    func createVault(header: VaultHeader, manifestTag: ManifestDigest) throws(StorageError)

    /// Checks that the storage holds exactly the layout of `formatVersion` and nothing else,
    /// or throws ``StorageError/schemaChanged``. A store without a schema (a key-value
    /// store) checks what stands in for one: that every key is one its layout defines, and
    /// that it holds vaults of `formatVersion` at all.
    func checkSchema(formatVersion: Int) throws(StorageError)

    // MARK: Transactions

    /// Runs `body` holding the write lock; commits, or rolls back if `body` throws.
    func writeTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result

    /// Runs `body` in one read snapshot (inside a transaction already, in that one's).
    func readTransaction<Result, BodyError: Error>(_ body: () throws(BodyError) -> Result) throws(StorageFailure<BodyError>) -> Result

    /// The version of the snapshot the last read saw (see the protocol's rules).
    var snapshotVersion: Int64 { get }

    /// Starts the snapshot of an open read transaction, so ``snapshotVersion`` names it.
    func pinSnapshot() throws(StorageError)

    // MARK: Header

    func readHeader() throws(StorageError) -> VaultHeader
    /// The header's key check value alone: the cheap test for "re-keyed by another process".
    func readMasterKeyCheck() throws(StorageError) -> [UInt8]
    /// Rewrites how the master key is wrapped (passphrase change, re-key, upgrade).
    func updateKeyWrapping(_ header: VaultHeader) throws(StorageError)
    func setFormatVersion(_ version: Int) throws(StorageError)

    // MARK: Items

    /// Calls `body` with the service tag, nonce and sealed record of one row, or
    /// returns `nil` when there is no such row.
    func withSealedItem<Result, BodyError: Error>(
        lookupID: [UInt8],
        _ body: (_ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer, _ sealed: UnsafeRawBufferPointer) throws(BodyError) -> Result
    ) throws(StorageFailure<BodyError>) -> Result?

    /// Calls `body` for every row, or every row with this service tag.
    func forEachRow<BodyError: Error>(serviceTag: [UInt8]?, _ body: (StoredRow) throws(BodyError) -> Void) throws(StorageFailure<BodyError>)

    /// Calls `body` with the identifying columns of every row, or of the rows whose
    /// lookup id is in `range.lower ..< range.upper` (`upper` `nil`: unbounded), in
    /// lookup id order: what the manifest is computed from.
    func forEachRowIdentity<BodyError: Error>(
        in range: (lower: [UInt8], upper: [UInt8]?)?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>)

    /// Inserts the row, or replaces the one with the same lookup id.
    func upsert(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError)

    /// Inserts the row unless one with its lookup id exists; returns whether it inserted.
    func insertIfAbsent(lookupID: [UInt8], serviceTag: [UInt8], nonce: UnsafeRawBufferPointer, sealed: [UInt8]) throws(StorageError) -> Bool

    /// Deletes one row; returns its service tag and nonce if it existed.
    func delete(lookupID: [UInt8]) throws(StorageError) -> (serviceTag: [UInt8], nonce: [UInt8])?

    /// Deletes every row with this service tag, or every row, calling `body` with the
    /// identifying columns of each; returns how many.
    func deleteAll<BodyError: Error>(
        serviceTag: [UInt8]?,
        _ body: (_ lookupID: UnsafeRawBufferPointer, _ serviceTag: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) throws(BodyError) -> Void
    ) throws(StorageFailure<BodyError>) -> Int

    // MARK: Manifest and generation

    /// The stored manifest root and its tag; `nil` where none is stored (format 1).
    func readManifestRoot() throws(StorageError) -> (root: [UInt8]?, tag: [UInt8]?)
    /// Stores the root, its tag and the generation the tag covers, in the caller's transaction.
    func writeManifestRoot(_ root: ManifestDigest, tag: ManifestDigest, generation: UInt64) throws(StorageError)
    func readGeneration() throws(StorageError) -> UInt64
    /// One bucket's stored digest, or `nil` when it has none (an empty bucket).
    func manifestDigest(bucket: Int) throws(StorageError) -> [UInt8]?
    /// Stores a bucket's digest; an all-zero digest (an empty bucket) is stored as none.
    func setManifestDigest(bucket: Int, _ digest: ManifestDigest) throws(StorageError)
    /// Calls `body` for every stored bucket digest.
    func forEachManifestBucket<BodyError: Error>(_ body: (_ bucket: Int64, _ digest: UnsafeRawBufferPointer) throws(BodyError) -> Void) throws(StorageFailure<BodyError>)
    func deleteAllManifestBuckets() throws(StorageError)

    /// Names the vault's state as the transaction in progress reads it, for a later
    /// ``manifestBuckets(changedSince:including:)``; `nil` (the default): the storage cannot tell
    /// which bucket rows changed since a state.
    var manifestMark: Int64? { get }

    /// The mark (as ``manifestMark`` names states) of the state this storage's last commit
    /// made, when that commit wrote the manifest root; `nil` (the default): none.
    ///
    /// Why: the engine moves its proven digests on with its own commit, and lists changes
    /// from this mark next. Kept at the mark of its last read instead, every later check
    /// listed this process's own buckets again, a list that grew with each of its writes
    /// (about 2 ms per read after 500 `set`s on PostgreSQL). A wrong mark costs a full
    /// read, never a wrong answer: the keyed sum decides.
    var manifestMarkOfLastCommit: Int64? { get }

    /// The buckets whose rows, in the transaction in progress, were written or deleted after
    /// the state `mark` named, and `bucket` whatever its age, with their digests (`nil`: the
    /// bucket has no row now); `nil` (the default): not known, and the engine reads every bucket. The list may miss a change (a bucket row deleted, or
    /// written by a transaction older than the mark): the engine accepts it only when the
    /// digests it verified at `mark`, with these in their place, sum to the tagged root,
    /// and reads every bucket otherwise (``ManifestCheck``).
    func manifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) -> [(bucket: Int64, digest: [UInt8]?)]?

    /// Says, before ``pinSnapshot()`` in a read transaction, which
    /// ``manifestBuckets(changedSince:including:)`` the engine will ask for if the snapshot
    /// shows the vault changed: a storage that pipelines may send it with the transaction's
    /// first statement. The default does nothing.
    func prefetchManifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError)

    /// Says, at the start of a read transaction, that the engine will read the row of
    /// `lookupID` in it (``withSealedItem(lookupID:_:)``): a storage that pipelines may send
    /// that read with the transaction's first statement, in the same snapshot, and answer
    /// the engine's call from it. Why: a `get` after another process's commit verifies the
    /// root in that first round trip and then needed one more for the row. The default
    /// does nothing.
    func prefetchItem(lookupID: [UInt8]) throws(StorageError)

    /// After ``snapshotVersion`` moved: keeps under the new version what vouched, under an
    /// earlier one, for lone reads of the rows of buckets the engine verified before and
    /// has just verified the new root of; returns the buckets it kept. The default keeps
    /// none: a storage whose version moves on every commit has nothing that tells a row
    /// changed behind the engine's back from one left alone.
    ///
    /// - Parameters:
    ///   - unchanged: buckets whose digests the new root shows unchanged: what vouched for
    ///     them vouches on, a row's absence included.
    ///   - changed: buckets another writer changed: only a row still at the version the
    ///     engine verified is vouched for (no writer, the engine's or an SQL user's, can
    ///     give a row version back once it is replaced or deleted), never a row's absence
    ///     (a row another writer added and someone then deleted would be missed).
    ///
    /// A storage that carries must also confirm the row a read transaction reads by itself
    /// (``withSealedItem(lookupID:_:)``, prefetched or not) in a bucket that transaction
    /// did not read whole, as it confirms a lone read's: the engine trusts such a row of
    /// a carried bucket only while ``snapshotVersion`` stays the verified one, and else
    /// reads the bucket in the same transaction.
    func carryVerifiedBuckets(unchanged: [Int], changed: [Int]) -> [Int]

    // MARK: Host key wraps (docs/FORMAT.md section 12)

    /// Every host key wrap in UTF-8 byte order of name, or `nil` when the vault has never
    /// had one (no host wraps table): the engine authenticates the difference.
    func readHostWraps() throws(StorageError) -> [StoredHostWrap]?
    /// Replaces all host wraps with `wraps` (creating their table if needed), in the
    /// caller's transaction.
    func replaceHostWraps(_ wraps: [StoredHostWrap]) throws(StorageError)

    // MARK: Coordination

    /// The lock named `name` shared by every host on this vault, or `nil` when the
    /// storage has none (``SharedLock``; the default).
    func sharedLock(named name: String) -> (any SharedLock)?
}

extension VaultStorage {
    package var manifestMark: Int64? { nil }
    package var manifestMarkOfLastCommit: Int64? { nil }
    package func manifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) -> [(bucket: Int64, digest: [UInt8]?)]? { nil }
    package func prefetchManifestBuckets(changedSince mark: Int64, including bucket: Int?) throws(StorageError) {}
    package func prefetchItem(lookupID: [UInt8]) throws(StorageError) {}
    package func carryVerifiedBuckets(unchanged: [Int], changed: [Int]) -> [Int] { [] }
}

/// A stored item row: its lookup id, service tag, nonce and sealed record.
package struct StoredRow {
    package var lookupID: [UInt8]
    package var serviceTag: [UInt8]
    package var nonce: [UInt8]
    package var sealed: [UInt8]

    package init(lookupID: [UInt8], serviceTag: [UInt8], nonce: [UInt8], sealed: [UInt8]) {
        self.lookupID = lookupID
        self.serviceTag = serviceTag
        self.nonce = nonce
        self.sealed = sealed
    }
}

/// A stored host key wrap: a host's name, its X25519 public key, and the master key
/// sealed to it with `crypto_box_seal`.
package struct StoredHostWrap: Sendable, Equatable {
    package var name: String
    package var publicKey: [UInt8]
    package var sealedMasterKey: [UInt8]

    package init(name: String, publicKey: [UInt8], sealedMasterKey: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
        self.sealedMasterKey = sealedMasterKey
    }
}
