/// Every statement ``PostgresVaultStorage`` and ``PostgresHeaderRow`` send, in one place,
/// so the SQL a vault runs can be read (and reviewed for what it touches) without the
/// code around it. The tables are ``PostgresSchema``'s; `$1` is always the vault's name.
///
/// Why constants, not text built per call: ``PostgresConnection`` prepares each statement
/// once per session, named by its text, so a statement's text must be the same on every
/// call; values travel only as binary parameters, never in the text.
enum PostgresSQL {
    // MARK: Sessions

    /// Set on every new session, whatever the server's, the database's or the role's
    /// default and whatever the connection string asks (``PostgresConnection``'s init says
    /// why each): durable commits, generic plans, READ COMMITTED for statements sent
    /// without `BEGIN`, the lock wait limit, and UTF-8 text. The names (a vault's, a
    /// host's) are stored and compared as the characters they are, and the manifest tag
    /// covers their UTF-8 bytes (docs/FORMAT.md section 13): with another client encoding
    /// the server would convert the bytes it is sent, so two clients would store and read
    /// one name as different characters.
    ///
    /// Its last statement answers whether the session may run ``durabilityBarrier``
    /// (`t` or `f`; `f` too where the function does not exist).
    static func sessionSettings(lockTimeoutMilliseconds: Int) -> String {
        """
        SET synchronous_commit = on; SET plan_cache_mode = force_generic_plan; \
        SET default_transaction_isolation = 'read committed'; SET lock_timeout = \(max(lockTimeoutMilliseconds, 1)); \
        SET client_encoding = 'UTF8'; \
        SELECT coalesce(has_function_privilege(to_regprocedure('\(barrierFunction)'), 'EXECUTE'), false)
        """
    }

    // MARK: Transactions

    static let beginWrite = "BEGIN ISOLATION LEVEL READ COMMITTED"
    static let beginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    static let commit = "COMMIT"
    static let rollback = "ROLLBACK"

    /// The write lock: this vault's header row, `FOR UPDATE`, before anything is read.
    static let lockHeader = "SELECT 1 FROM vaultkit_header WHERE vault = $1 FOR UPDATE"

    /// The snapshot, the header row's `xmin` (NULL: no header), the host key wraps' and
    /// the header's flag saying the vault has wraps.
    static let vaultState = """
        SELECT pg_current_snapshot()::text, h.xmin::text, \(hostWrapsXmin), \(hasHostWraps)
        FROM (SELECT 1) AS one LEFT JOIN vaultkit_header h ON h.vault = $1
        """

    /// The host key wraps' `xmin`s of vault `$1`, ascending and comma-separated; NULL for
    /// none, and for a vault whose header row `h` says it has none.
    ///
    /// Why only then: the engine reads no wrap of such a vault (``PostgresHeaderRow``), so
    /// its wraps rows are no part of what it verified, and the subquery (an `InitPlan`)
    /// runs only when the branch is taken. Setting the flag changes the header row, so it
    /// moves the vault state anyway. A lone read of such a vault leaves the subquery out
    /// altogether (``loneReadWithoutHostWraps``): the executor sets up an `InitPlan` on
    /// every execution, taken or not.
    static let hostWrapsXmin = "CASE WHEN h.has_host_wraps THEN (SELECT string_agg(w.xmin::text, ',' ORDER BY w.xmin::text::bigint) FROM vaultkit_host_wraps w WHERE w.vault = $1) END"

    /// The header row `h`'s flag saying the vault has host key wraps (0 without a header row).
    static let hasHostWraps = "coalesce(h.has_host_wraps, false)::int::int8"

    // MARK: Creating and checking

    /// Creates the tables if they are missing, under a lock that serialises first-time
    /// creation (`CREATE TABLE IF NOT EXISTS` races itself), in a transaction left open
    /// for ``insertHeader``.
    static let beginCreating = "BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.creationLock)); " + PostgresSchema.all.joined(separator: "; ")

    /// How many of the tables and indexes ``beginCreating`` creates exist in the schema it
    /// creates them in (the first of the `search_path`, as `IF NOT EXISTS` looks).
    static let createdRelations = """
        SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname IN \(PostgresSchema.createdList)
        """

    /// A new vault's header row (generation 0), unless the vault exists.
    static let insertHeader = """
        INSERT INTO vaultkit_header (vault, format_version, vault_id, kdf_algorithm, kdf_salt, kdf_opslimit, kdf_memlimit,
            master_key_nonce, wrapped_master_key, master_key_check, manifest_root, manifest_tag, generation)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0)
        ON CONFLICT (vault) DO NOTHING
        """

    /// The change marker's table and index (docs/FORMAT.md section 13.1), created by the
    /// first host of this release that opens a vault whose tables lack them and may create
    /// tables, under the creation lock.
    static let createChanges = "BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.creationLock)); " + PostgresSchema.changes.joined(separator: "; ") + "; COMMIT"

    /// Every column of the vault's tables as `table.column type nullable`.
    static let schemaColumns = """
        SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
        FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name IN \(PostgresSchema.checkedTableList)
        """

    /// How many valid, plain b-tree indexes on `vaultkit_manifest_changes` have exactly the
    /// columns `(vault, changed)` (the range scan the change marker is read by), and
    /// whether this role may read, insert and update its rows (`true` or `false`).
    static let schemaChanges = """
        SELECT (SELECT count(*) FROM pg_index i
        JOIN pg_class c ON c.oid = i.indrelid
        JOIN pg_class x ON x.oid = i.indexrelid
        JOIN pg_am am ON am.oid = x.relam
        WHERE c.relname = 'vaultkit_manifest_changes' AND c.relnamespace = current_schema()::regnamespace
          AND am.amname = 'btree' AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
          AND (SELECT array_agg(a.attname::text ORDER BY k.ordinality)
               FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ordinality)
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) = ARRAY['vault', 'changed']),
            (SELECT bool_and(has_table_privilege(c.oid, p)) FROM pg_class c, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE']) AS p
             WHERE c.relname = 'vaultkit_manifest_changes' AND c.relnamespace = current_schema()::regnamespace)::text
        """

    /// The primary keys of the vault's tables as `table:column,column`, in key order.
    static let schemaPrimaryKeys = """
        SELECT c.relname || ':' || string_agg(a.attname, ',' ORDER BY k.ordinality)
        FROM pg_constraint p
        JOIN pg_class c ON c.oid = p.conrelid
        CROSS JOIN LATERAL unnest(p.conkey) WITH ORDINALITY AS k(attnum, ordinality)
        JOIN pg_attribute a ON a.attrelid = p.conrelid AND a.attnum = k.attnum
        WHERE p.contype = 'p' AND c.relnamespace = current_schema()::regnamespace
          AND c.relname IN \(PostgresSchema.checkedTableList)
        GROUP BY c.relname, p.oid
        """

    /// How many user triggers and rules the vault's tables have (the internal triggers of
    /// the `REFERENCES` clauses are not counted); then whether `service_tag` still needs
    /// ``serviceTagsPlannedAsDistinct`` (`true`: it lacks the option and this role owns the
    /// table, so may set it).
    static let schemaHooks = """
        SELECT (SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
                  AND c.relname IN \(PostgresSchema.checkedTableList))
             + (SELECT count(*) FROM pg_rules WHERE schemaname = current_schema()
                  AND tablename IN \(PostgresSchema.checkedTableList)),
            coalesce((SELECT NOT coalesce(a.attoptions @> ARRAY['n_distinct=-1'], false) AND pg_has_role(c.relowner, 'USAGE')
                      FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'service_tag'
                      WHERE c.relname = 'vaultkit_items' AND c.relnamespace = current_schema()::regnamespace), false)::text
        """

    /// Tells the planner to cost `service_tag = $n` as a handful of rows, as it is for
    /// an item's history (its own tag) and usually for a service.
    ///
    /// Why: statements are planned once per session (`plan_cache_mode =
    /// force_generic_plan`), and a generic plan costs an equality by the column's number
    /// of distinct values. Once `ANALYZE` has seen a vault whose items are mostly of one
    /// service (10,000 tokens of one API, say), that is a handful, so the planner chose a
    /// sequential scan of every item row for the check that an item has no version yet
    /// and for reading an item's versions: 1.4-2 ms for 10,000 rows on every `set` that
    /// keeps history, where the index answers in 0.02 ms (Benchmarks/README.md,
    /// "PostgreSQL under load"). Only the estimate changes; no row, key or result does.
    /// Its lock (`SHARE UPDATE EXCLUSIVE`, which reads and writes do not wait for, but a
    /// running `VACUUM` holds) is waited for briefly: the next opening tries again.
    static let serviceTagsPlannedAsDistinct = """
        BEGIN; SET LOCAL lock_timeout = 200; \
        ALTER TABLE vaultkit_items ALTER COLUMN service_tag SET (n_distinct = -1); COMMIT
        """

    // MARK: Header

    /// Reads the row of vault `$1`, once per host key wrap (at least once while the row
    /// exists): the snapshot, the session's transaction id, the header's columns, then
    /// one wrap's (NULL when there is none), the header's `xmin` and the wrap's
    /// (``PostgresHeaderRow`` reads the columns by these positions).
    static let headerRow = """
        SELECT pg_current_snapshot()::text, pg_current_xact_id_if_assigned()::text,
               h.format_version, h.vault_id, h.kdf_algorithm, h.kdf_salt, h.kdf_opslimit, h.kdf_memlimit,
               h.master_key_nonce, h.wrapped_master_key, h.master_key_check, h.manifest_root, h.manifest_tag,
               h.generation, h.has_host_wraps::int::int8, w.name, w.public_key, w.sealed_master_key,
               h.xmin::text, w.xmin::text
        FROM vaultkit_header h LEFT JOIN vaultkit_host_wraps w ON w.vault = h.vault
        WHERE h.vault = $1
        """

    /// ``headerRow``'s columns for a read transaction's first statement, which names its
    /// snapshot and vault state too: one row of NULLs (but the snapshot) when the vault has
    /// no header row, so the snapshot is read either way.
    static let readTransactionFirst = """
        SELECT pg_current_snapshot()::text, pg_current_xact_id_if_assigned()::text,
               h.format_version, h.vault_id, h.kdf_algorithm, h.kdf_salt, h.kdf_opslimit, h.kdf_memlimit,
               h.master_key_nonce, h.wrapped_master_key, h.master_key_check, h.manifest_root, h.manifest_tag,
               h.generation, h.has_host_wraps::int::int8, w.name, w.public_key, w.sealed_master_key,
               h.xmin::text, w.xmin::text
        FROM (SELECT 1) AS one
        LEFT JOIN vaultkit_header h ON h.vault = $1
        LEFT JOIN vaultkit_host_wraps w ON w.vault = h.vault
        """

    /// The key wrapping columns, `$2` .. `$8` (``PostgresVaultStorage/keyWrapping(_:)``).
    static let updateKeyWrapping = """
        UPDATE vaultkit_header SET kdf_algorithm = $2, kdf_salt = $3, kdf_opslimit = $4, kdf_memlimit = $5,
            master_key_nonce = $6, wrapped_master_key = $7, master_key_check = $8
        WHERE vault = $1
        """

    static let setFormatVersion = "UPDATE vaultkit_header SET format_version = $2 WHERE vault = $1"

    // MARK: Items

    /// One item's row with its `xmin`, and the vault state (the header's `xmin`, the host
    /// key wraps' and the header's flag saying it has wraps), in one statement.
    static let loneRead = loneRead(hostWraps: hostWrapsXmin)

    /// ``loneRead`` with NULL for the wraps' `xmin`s: for a vault whose header row, in the
    /// state this storage holds, says it has no wraps (then ``hostWrapsXmin`` is NULL
    /// too), and inside a transaction, which takes its state from its first statement.
    /// Why: setting up the unused subquery was about a tenth of the server's time per lone
    /// read (`ExecInitAgg`, perf, reads at one client; Benchmarks/README.md, "The lone
    /// read without the host wraps' subquery"). A header changed since shows another
    /// `xmin`, so the state differs whichever statement read it.
    static let loneReadWithoutHostWraps = loneRead(hostWraps: "NULL::text")

    private static func loneRead(hostWraps: String) -> String {
        """
        SELECT i.service_tag, i.nonce, i.sealed, i.xmin::text, h.xmin::text, \(hostWraps), \(hasHostWraps)
        FROM (SELECT 1) AS one
        LEFT JOIN vaultkit_header h ON h.vault = $1
        LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
        """
    }

    /// Whole rows with their `xmin`; callers add conditions (`AND ...`) and an order.
    static let wholeRows = "SELECT lookup_id, service_tag, nonce, sealed, xmin::text FROM vaultkit_items WHERE vault = $1"

    /// Rows without their sealed records, with their `xmin`; callers add a range and the order.
    static let rowIdentities = "SELECT lookup_id, service_tag, nonce, xmin::text FROM vaultkit_items WHERE vault = $1"

    /// Conditions and the order appended to ``wholeRows`` or ``rowIdentities``.
    static let ofService = " AND service_tag = $2"
    static let fromLookupID = " AND lookup_id >= $2"
    static let belowLookupID = " AND lookup_id < $3"
    static let inLookupIDOrder = " ORDER BY lookup_id"

    /// One row, read again: ``PostgresVaultStorage/rowInPlace(of:inserted:found:)``.
    static let itemRow = "SELECT service_tag, nonce, sealed, xmin::text FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2"

    static let upsertItem = """
        INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (vault, lookup_id) DO UPDATE SET service_tag = EXCLUDED.service_tag, nonce = EXCLUDED.nonce, sealed = EXCLUDED.sealed
        """

    /// Inserts the row unless one is in its place, and returns whether it did and the
    /// row in its place (with its `xmin`) as the statement's snapshot shows it.
    static let insertOrFindItem = """
        WITH inserted AS (
            INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (vault, lookup_id) DO NOTHING RETURNING 1
        )
        SELECT (SELECT count(*) FROM inserted), i.service_tag, i.nonce, i.sealed, i.xmin::text
        FROM (SELECT 1) AS one LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
        """

    static let deleteItem = "DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2 RETURNING service_tag, nonce, xmin::text"
    static let deleteItemsOfService = "DELETE FROM vaultkit_items WHERE vault = $1 AND service_tag = $2 RETURNING lookup_id, service_tag, nonce"
    static let deleteAllItems = "DELETE FROM vaultkit_items WHERE vault = $1 RETURNING lookup_id, service_tag, nonce"

    /// Rows `$2` .. `$5` (arrays of each column, `unnest`ed) inserted where none is in
    /// their place; returns, for each row that did not go in, its position (from 1) and
    /// the row in its place with its `xmin` (NULL when the statement's snapshot shows none).
    static let insertAllIfAbsent = """
        WITH new AS (
            SELECT * FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[])
                WITH ORDINALITY AS n(lookup_id, service_tag, nonce, sealed, position)
        ), inserted AS (
            INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed)
            SELECT $1, lookup_id, service_tag, nonce, sealed FROM new ORDER BY position
            ON CONFLICT (vault, lookup_id) DO NOTHING
            RETURNING lookup_id
        )
        SELECT kept_out.position, i.service_tag, i.nonce, i.sealed, i.xmin::text
        FROM (SELECT position, lookup_id FROM new WHERE lookup_id NOT IN (SELECT lookup_id FROM inserted)) AS kept_out
        LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = kept_out.lookup_id
        """

    // MARK: Manifest and generation

    static let writeManifestRoot = "UPDATE vaultkit_header SET manifest_root = $2, manifest_tag = $3, generation = $4 WHERE vault = $1"
    static let manifestDigest = "SELECT digest FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2"
    static let allManifestDigests = "SELECT bucket, digest FROM vaultkit_manifest WHERE vault = $1"
    static let upsertManifestDigest = """
        INSERT INTO vaultkit_manifest (vault, bucket, digest) VALUES ($1, $2, $3)
        ON CONFLICT (vault, bucket) DO UPDATE SET digest = EXCLUDED.digest
        """
    static let deleteManifestDigest = "DELETE FROM vaultkit_manifest WHERE vault = $1 AND bucket = $2"
    static let deleteAllManifestDigests = "DELETE FROM vaultkit_manifest WHERE vault = $1"

    // MARK: Host key wraps

    static let markHostWraps = "UPDATE vaultkit_header SET has_host_wraps = true WHERE vault = $1"
    static let deleteHostWraps = "DELETE FROM vaultkit_host_wraps WHERE vault = $1"
    static let insertHostWrap = "INSERT INTO vaultkit_host_wraps (vault, name, public_key, sealed_master_key) VALUES ($1, $2, $3, $4)"

    // MARK: Prepared sets

    /// The header `UPDATE` of a prepared `set`, which takes the write lock: it applies only
    /// if the header still holds the generation (`$5`) and tag (`$6`) the `set` was
    /// prepared from and, when the vault state is known, the row version `$7`.
    static let preparedHeaderUpdate = """
        UPDATE vaultkit_header SET manifest_root = $2, manifest_tag = $3, generation = $4
        WHERE vault = $1 AND generation = $5 AND manifest_tag = $6 AND ($7::text IS NULL OR xmin = $7::xid)
        """

    /// Run right after ``preparedHeaderUpdate``: checks, in one statement that also reads
    /// the snapshot and the transaction id, that the header now holds what `set` wrote
    /// (`$2`, `$3`: the `UPDATE` applied), the row in the item's place (`$4`; nonce `$5`,
    /// NULL for none) and the bucket's digest (`$6`; digest `$7`, NULL for no row) and
    /// the host key wraps' `xmin`s (`$8`, '' for none; NULL: not compared). Its snapshot
    /// is taken after the lock, so it sees every commit before this one. Any difference
    /// leaves no row to count and divides by zero (SQLSTATE 22012,
    /// ``preparedStateDiffers``), which aborts the transaction before the item and digest
    /// writes and undoes the header's; nothing else in these statements divides. One join
    /// on primary keys: about half the server time of a subquery per table.
    static let preparedSetCheck = """
        SELECT pg_current_snapshot()::text, pg_current_xact_id_if_assigned()::text, 1 / count(*)
        FROM vaultkit_header h
        LEFT JOIN vaultkit_items i ON i.vault = h.vault AND i.lookup_id = $4
        LEFT JOIN vaultkit_manifest m ON m.vault = h.vault AND m.bucket = $6
        WHERE h.vault = $1 AND h.generation = $2 AND h.manifest_tag = $3
            AND i.nonce IS NOT DISTINCT FROM $5 AND m.digest IS NOT DISTINCT FROM $7
            AND ($8::text IS NULL OR coalesce(\(hostWrapsXmin), '') = $8)
        """

    /// Run after ``preparedSetCheck`` when a prepared `set` keeps a version (docs/FORMAT.md
    /// section 14), and fails the same way: the kept version's id `$2` is free (NULL: not
    /// checked), the trimmed version `$3` holds nonce `$4`, no row has the history tag `$5`
    /// (an unnumbered item's first version), the settings row `$6` holds nonce `$7` (NULL:
    /// no row), and buckets `$8` and `$10` (NULL: none) have digests `$9` and `$11`.
    static let preparedHistoryCheck = """
        SELECT 1 / count(*) FROM vaultkit_header h
        WHERE h.vault = $1
            AND ($2::bytea IS NULL OR NOT EXISTS (SELECT 1 FROM vaultkit_items v WHERE v.vault = $1 AND v.lookup_id = $2))
            AND ($3::bytea IS NULL OR EXISTS (SELECT 1 FROM vaultkit_items t WHERE t.vault = $1 AND t.lookup_id = $3 AND t.nonce = $4))
            AND ($5::bytea IS NULL OR NOT EXISTS (SELECT 1 FROM vaultkit_items g WHERE g.vault = $1 AND g.service_tag = $5))
            AND (SELECT s.nonce FROM vaultkit_items s WHERE s.vault = $1 AND s.lookup_id = $6) IS NOT DISTINCT FROM $7
            AND ($8::bigint IS NULL OR (SELECT m.digest FROM vaultkit_manifest m WHERE m.vault = $1 AND m.bucket = $8) IS NOT DISTINCT FROM $9)
            AND ($10::bigint IS NULL OR (SELECT m.digest FROM vaultkit_manifest m WHERE m.vault = $1 AND m.bucket = $10) IS NOT DISTINCT FROM $11)
        """

    /// A kept version trimmed by a prepared `set` (checked by ``preparedHistoryCheck``).
    static let deleteVersion = "DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2"

    /// The SQLSTATE of ``preparedSetCheck`` finding the vault changed (division by zero).
    static let preparedStateDiffers = "22012"

    static let updateItem = "UPDATE vaultkit_items SET service_tag = $3, nonce = $4, sealed = $5 WHERE vault = $1 AND lookup_id = $2"
    static let insertItem = "INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)"
    static let insertManifestDigest = "INSERT INTO vaultkit_manifest (vault, bucket, digest) VALUES ($1, $2, $3)"
    static let updateManifestDigest = "UPDATE vaultkit_manifest SET digest = $3 WHERE vault = $1 AND bucket = $2"

    // MARK: Early lock release

    /// Sent before a write transaction's `COMMIT` (a query, prepared and pipelined like
    /// the others, local to the transaction whether it began with `BEGIN` or is a
    /// prepared set's implicit one): this commit
    /// returns, and releases the write lock, without waiting for its WAL to be flushed.
    /// ``durabilityBarrier`` then waits for the flush, outside the lock, before the write
    /// is acknowledged (docs/POSTGRES.md, "Early lock release").
    static let asynchronousCommit = "SELECT set_config('synchronous_commit', 'off', true)"

    /// The durability barrier, a transaction of its own (the session's `synchronous_commit
    /// = on`) that writes one WAL record: a transactional logical decoding message, which
    /// touches no table, so its commit must flush the WAL up to its own commit record,
    /// after every commit record this session wrote or saw before it. (A transaction that
    /// only takes an id writes no WAL, and its commit does not wait for a flush.)
    /// Concurrent barriers share one flush (the server's group commit). Returns its
    /// transaction id, so a writer can tell its snapshot's next state from another
    /// session's commit (``PostgresSnapshot/version(completing:)``).
    static let durabilityBarrier = "SELECT pg_logical_emit_message(true, 'vaultkit', ''::bytea)::text, pg_current_xact_id()::text"

    /// The function ``durabilityBarrier`` calls, as `to_regprocedure` names it.
    static let barrierFunction = "pg_logical_emit_message(boolean,text,bytea)"

    // MARK: Shared locks

    static let noLockTimeout = "SET lock_timeout = 0"
    static let advisoryLock = "SELECT pg_advisory_lock($1)"
    static let advisoryUnlock = "SELECT pg_advisory_unlock($1)"

    // MARK: Manifest rows changed since a state (FORMAT.md section 13.1)

    /// The buckets of vault `$1` whose change marker is above generation `$2`, and bucket
    /// `$3` (NULL: none), each once with its digest (NULL: the bucket has no row, so a
    /// bucket emptied since is listed too). An index range and a primary key probe per
    /// bucket listed (a subquery: as a join, the generic plan hashes every digest row of
    /// the table), nothing when nothing changed. A hint only: the engine checks the sum
    /// (``PostgresVaultStorage/manifestBuckets(changedSince:including:)``).
    static let manifestDigestsChangedSinceGeneration = """
        SELECT b.bucket, (SELECT m.digest FROM vaultkit_manifest m WHERE m.vault = $1 AND m.bucket = b.bucket) FROM (
            SELECT c.bucket FROM vaultkit_manifest_changes c WHERE c.vault = $1 AND c.changed > $2
            UNION SELECT $3::bigint WHERE $3::bigint IS NOT NULL
        ) AS b
        """

    /// Marks buckets `$2` (an array) of vault `$1` as changed by the commit of generation
    /// `$3`: sent by every write that changes bucket digests, in its transaction.
    static let markChanges = """
        INSERT INTO vaultkit_manifest_changes (vault, bucket, changed) SELECT $1, unnest($2::bigint[]), $3
        ON CONFLICT (vault, bucket) DO UPDATE SET changed = EXCLUDED.changed
        """

    /// Where the change marker is missing (a role that may not create it, docs/FORMAT.md
    /// section 13.1): the bucket rows of vault `$1` written by a transaction newer than `$2` (a header
    /// row's `xmin`: younger rows have a smaller `age`), and the row of bucket `$3` (NULL:
    /// none) whatever its age. An optimisation only: the engine checks the sum
    /// (``PostgresVaultStorage/manifestBuckets(changedSince:including:)``).
    static let manifestDigestsChangedSince = """
        SELECT bucket, digest FROM vaultkit_manifest
        WHERE vault = $1 AND (age(xmin) < age($2::xid) OR bucket = $3)
        """
}
