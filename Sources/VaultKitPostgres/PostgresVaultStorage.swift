import VaultKit

/// A vault in a PostgreSQL database: the second ``VaultStorage`` beside the SQLite file,
/// the same opaque rows in the tables of ``PostgresSchema``.
///
/// - Writes: `BEGIN` (READ COMMITTED), then the header row is locked `FOR UPDATE`
///   before anything is read, so writers on any number of connections and hosts run one
///   at a time, each seeing every earlier commit; a lock wait longer than the busy
///   timeout is ``StorageError/busy(location:)``. A write commits without waiting for its
///   WAL flush, releasing the lock at once, and returns only once the durability barrier
///   behind it has seen the flush (``PostgresSQL/durabilityBarrier``; `synchronous_commit`
///   is on for everything else, set per session).
/// - Reads: one REPEATABLE READ, READ ONLY transaction, so a multi-row read sees one snapshot.
/// - ``snapshotVersion``: names this vault's state by row versions (``PostgresRowVersions``):
///   the header row's and host key wraps' `xmin`, read after the write lock, by
///   ``pinSnapshot()`` and with a lone item read, which also compares its row's `xmin`
///   with the one verified. It changes when this vault's header changes (every write of
///   the engine updates it) and when a lone read finds its row changed, put back, added
///   or gone without the header (an attacker's SQL), not when another table or vault
///   commits. After its own commit a writer reports the state it wrote (the header's new
///   `xmin` is its own transaction's), so what the engine verified survives its own writes.
/// - The manifest digests kept for writes (``PostgresManifestCache``) stay tied to the
///   cluster's snapshot (``PostgresSnapshot``): any commit anywhere makes a writer read
///   them again.
/// - Round trips (``PostgresConnection``): `BEGIN`, the lock and the header row
///   (``PostgresHeaderRow``, kept for the transaction) travel together; writes whose
///   results the engine does not need wait and travel with the next statement, the last
///   ones with `COMMIT`. A lone `set` the engine prepared whole travels with all of them
///   in one (``commit(_:)``). A batch's `set`s arrive together (``GatheringInsertStorage``), up
///   to 1,000 rows per statement. The steady-state statements per operation are listed
///   in Benchmarks/README.md, "PostgreSQL".
///
/// This file holds the stored state; each job is an extension of its own
/// (`PostgresVaultStorage+Transactions.swift`, `+Header`, `+Items`, `+Manifest`,
/// `+HostWraps`, `+PreparedSet`, `+BulkInsert`, `+Schema`, `+Session`, `+SharedLock`,
/// `+Durability`, `+Standby`),
/// every SQL text is in ``PostgresSQL``, and SQLSTATEs become ``StorageError``s in
/// `PostgresFailure+StorageError.swift`.
package final class PostgresVaultStorage: RoundTripSavingStorage {
    package let location: String
    let vault: String
    /// Where the vault is, for connections besides ``connection`` (``sharedLock(named:)``).
    let postgresLocation: PostgresVaultLocation
    /// The tests read the session settings through it. Replaced by a new session when the
    /// server ended this one (``reconnectIfEnded()``).
    var connection: PostgresConnection
    let lockTimeoutMilliseconds: Int
    /// The transaction in progress, and what it keeps (``PostgresTransactionState``).
    var transaction = PostgresTransactionState.idle
    package internal(set) var snapshotVersion: Int64 = -1
    /// Manifest digests known for a snapshot version: used in a write transaction, and in
    /// a read transaction once ``pinSnapshot()`` has named its snapshot.
    var manifestCache = PostgresManifestCache()
    /// Versions handed out after own commits: negative, never a snapshot's (those are >= 0).
    var ownCommitVersion: Int64 = -1
    /// The vault's state and the row versions verified under ``snapshotVersion``.
    var rowVersions = PostgresRowVersions()
    /// Whether the tables have the change marker (``PostgresSchema/changesTable``), as the
    /// schema check found: writes then record the buckets they change by generation, and
    /// changed buckets are listed from it; else by row versions (``manifestMark``).
    var changeMarkers = false
    /// The state the last commit made, as ``manifestMark`` names states, when it wrote the
    /// root (the generation it wrote, or its header row's `xmin`: its own transaction id).
    package internal(set) var manifestMarkOfLastCommit: Int64?
    /// Manifest bucket rows this storage has read, for the tests: re-verifying a root
    /// after another writer's commit reads the rows it changed, not all.
    var manifestRowsRead = 0
    /// Write transactions this storage began (`BEGIN` and the header row lock), for the
    /// tests: a lone `set` that is prepared takes none.
    var writeTransactionsBegun = 0
    /// The hot standby lone reads may go to, if the location names one.
    let standby: PostgresStandby?

    package init(_ location: PostgresVaultLocation, lockTimeoutMilliseconds: Int) throws(StorageError) {
        self.location = location.description
        vault = location.vaultName
        postgresLocation = location
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        standby = location.standby.map(PostgresStandby.init)
        do {
            connection = try PostgresConnection(conninfo: location.conninfo, password: location.password, lockTimeoutMilliseconds: lockTimeoutMilliseconds)
        } catch {
            throw error.storageError(location: location.description)
        }
    }

    /// Whether the manifest digests kept in ``manifestCache`` describe what this
    /// transaction reads: in a write (they are the lock's), and in a read once pinned.
    var manifestCacheUsable: Bool {
        switch transaction {
        case .writing: true
        case .reading(let read): read.pinned
        case .idle, .locking, .committingPreparedSet: false
        }
    }
}
