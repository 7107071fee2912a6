/// The PostgreSQL layout of a vault (docs/FORMAT.md, "PostgreSQL"): tables shared by every
/// vault in the database, each row keyed by the vault's name.
///
/// Why one set of tables with a `vault` column, not a schema per vault: creating a vault
/// is then one INSERT (no DDL, no privileges beyond the tables), and the schema check is
/// the same for every vault.
enum PostgresSchema {
    /// The header: the file vault's `vault_header`, its manifest root and tag, and the
    /// file vault's `vault_generation` counter in the same row, which every write
    /// transaction locks first (`SELECT ... FOR UPDATE`) and updates last.
    static let headerTable = """
        CREATE TABLE IF NOT EXISTS vaultkit_header (
            vault text PRIMARY KEY,
            format_version bigint NOT NULL,
            vault_id bytea NOT NULL,
            kdf_algorithm text NOT NULL,
            kdf_salt bytea,
            kdf_opslimit bigint,
            kdf_memlimit bigint,
            master_key_nonce bytea NOT NULL,
            wrapped_master_key bytea NOT NULL,
            master_key_check bytea NOT NULL,
            manifest_root bytea NOT NULL,
            manifest_tag bytea NOT NULL,
            generation bigint NOT NULL,
            has_host_wraps boolean NOT NULL DEFAULT false
        )
        """
    static let itemsTable = """
        CREATE TABLE IF NOT EXISTS vaultkit_items (
            vault text NOT NULL REFERENCES vaultkit_header (vault),
            lookup_id bytea NOT NULL,
            service_tag bytea NOT NULL,
            nonce bytea NOT NULL,
            sealed bytea NOT NULL,
            PRIMARY KEY (vault, lookup_id)
        )
        """
    static let itemsByServiceIndex = "CREATE INDEX IF NOT EXISTS vaultkit_items_by_service ON vaultkit_items (vault, service_tag)"
    static let manifestTable = """
        CREATE TABLE IF NOT EXISTS vaultkit_manifest (
            vault text NOT NULL REFERENCES vaultkit_header (vault),
            bucket bigint NOT NULL,
            digest bytea NOT NULL,
            PRIMARY KEY (vault, bucket)
        )
        """
    /// The host key wraps (docs/FORMAT.md section 12) of every vault that has had one;
    /// `vaultkit_header.has_host_wraps` says whether a vault has (the file vault tells the
    /// same by whether its `vault_host_wraps` table exists), because the manifest tag
    /// covers "no wraps ever" and "an empty list" differently.
    static let hostWrapsTable = """
        CREATE TABLE IF NOT EXISTS vaultkit_host_wraps (
            vault text NOT NULL REFERENCES vaultkit_header (vault),
            name text NOT NULL,
            public_key bytea NOT NULL,
            sealed_master_key bytea NOT NULL,
            PRIMARY KEY (vault, name)
        )
        """
    /// Which manifest buckets each vault's commits changed, by the generation of the commit
    /// that last wrote each (docs/FORMAT.md section 13.1): a reader that proved the digests
    /// at generation `g` lists the buckets changed since with one range of the index below.
    /// An untrusted hint: the keyed sum of the digests stays the proof, so a wrong row can
    /// only cost a full read. No `REFERENCES`: nothing here needs the header row to exist,
    /// and a foreign key would cost every write a lookup.
    ///
    /// Why a table of its own, not a column of `vaultkit_manifest`: hosts of earlier releases
    /// check exactly the columns of the four tables of ``tableList``, so they keep opening a
    /// vault whose tables a newer host extended this way (a column would make them refuse
    /// it), and a row per bucket outlives its digest row, so a bucket emptied is listed too.
    static let changesTable = """
        CREATE TABLE IF NOT EXISTS vaultkit_manifest_changes (
            vault text NOT NULL,
            bucket bigint NOT NULL,
            changed bigint NOT NULL,
            PRIMARY KEY (vault, bucket)
        )
        """
    static let changesByGenerationIndex = "CREATE INDEX IF NOT EXISTS vaultkit_manifest_changes_by_generation ON vaultkit_manifest_changes (vault, changed)"
    static let changes = [changesTable, changesByGenerationIndex]
    static let all = [headerTable, itemsTable, itemsByServiceIndex, manifestTable, hostWrapsTable] + changes
    /// The names of the tables and indexes ``all`` creates.
    static let created = [
        "vaultkit_header", "vaultkit_items", "vaultkit_items_by_service", "vaultkit_manifest", "vaultkit_host_wraps",
        "vaultkit_manifest_changes", "vaultkit_manifest_changes_by_generation",
    ]
    static let createdList = "(" + created.map { "'\($0)'" }.joined(separator: ", ") + ")"

    /// The tables every release's schema check covers, as an SQL list (earlier releases
    /// check these four only).
    static let tableList = "('vaultkit_header', 'vaultkit_items', 'vaultkit_manifest', 'vaultkit_host_wraps')"
    /// ``tableList`` and the change marker's table: what this release checks.
    static let checkedTableList = "('vaultkit_header', 'vaultkit_items', 'vaultkit_manifest', 'vaultkit_host_wraps', 'vaultkit_manifest_changes')"

    /// Every column as `table.column type nullable`, as `information_schema.columns`
    /// reports it: what ``PostgresVaultStorage/checkSchema(formatVersion:)`` compares.
    static let expectedColumns: Set<String> = [
        "vaultkit_header.vault text NO",
        "vaultkit_header.format_version bigint NO",
        "vaultkit_header.vault_id bytea NO",
        "vaultkit_header.kdf_algorithm text NO",
        "vaultkit_header.kdf_salt bytea YES",
        "vaultkit_header.kdf_opslimit bigint YES",
        "vaultkit_header.kdf_memlimit bigint YES",
        "vaultkit_header.master_key_nonce bytea NO",
        "vaultkit_header.wrapped_master_key bytea NO",
        "vaultkit_header.master_key_check bytea NO",
        "vaultkit_header.manifest_root bytea NO",
        "vaultkit_header.manifest_tag bytea NO",
        "vaultkit_header.generation bigint NO",
        "vaultkit_header.has_host_wraps boolean NO",
        "vaultkit_items.vault text NO",
        "vaultkit_items.lookup_id bytea NO",
        "vaultkit_items.service_tag bytea NO",
        "vaultkit_items.nonce bytea NO",
        "vaultkit_items.sealed bytea NO",
        "vaultkit_manifest.vault text NO",
        "vaultkit_manifest.bucket bigint NO",
        "vaultkit_manifest.digest bytea NO",
        "vaultkit_host_wraps.vault text NO",
        "vaultkit_host_wraps.name text NO",
        "vaultkit_host_wraps.public_key bytea NO",
        "vaultkit_host_wraps.sealed_master_key bytea NO",
    ]

    /// The primary keys, as `table:column,column` in key order.
    static let expectedPrimaryKeys: Set<String> = [
        "vaultkit_header:vault",
        "vaultkit_items:vault,lookup_id",
        "vaultkit_manifest:vault,bucket",
        "vaultkit_host_wraps:vault,name",
    ]

    /// The change marker's columns and primary key, as ``expectedColumns`` and
    /// ``expectedPrimaryKeys`` list theirs: a schema has all of them or none (the layout
    /// of earlier releases).
    static let expectedChangesColumns: Set<String> = [
        "vaultkit_manifest_changes.vault text NO",
        "vaultkit_manifest_changes.bucket bigint NO",
        "vaultkit_manifest_changes.changed bigint NO",
    ]
    static let expectedChangesPrimaryKey = "vaultkit_manifest_changes:vault,bucket"

    /// Serialises concurrent first-time creation of the tables (`CREATE TABLE IF NOT
    /// EXISTS` races itself): a transaction-scoped advisory lock on this number.
    static let creationLock: Int64 = 0x564C_544B_5047  // "VLTKPG"
}
