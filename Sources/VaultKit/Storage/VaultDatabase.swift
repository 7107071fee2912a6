/// The vault file as SQL: the schema, the header row and the sealed item rows.
///
/// The first ``VaultStorage``: knows nothing of keys or records, it stores and returns
/// opaque bytes. Every SQLite failure leaves this type as a ``StorageError`` (see
/// ``SQLiteError/translated(path:)``). Beyond the seam it keeps what only a file has: opening
/// read-only or immutable, the side files, and ``backup(into:)``.
/// The format is specified in `docs/FORMAT.md`.
///
/// One concern a file, `VaultDatabase+Concern.swift`: the open policy, the schema,
/// creation, transactions, the header, host wraps, items, the manifest, the format
/// upgrade, the backup and the statement plumbing.
final class VaultDatabase: VaultStorage {
    /// `PRAGMA application_id`: the ASCII bytes "VLTK", so `file(1)`-style tools and
    /// VaultKit can tell a vault from any other SQLite database.
    static let applicationID: Int32 = 0x564C_544B

    let path: String
    var location: String { path }
    let connection: SQLiteConnection
    /// Why this vault can only be read (read-only media or directory, a full disk), as
    /// the error every write throws; `nil` when it can be written.
    let readOnlyReason: StorageError?

    /// Opens a connection to the existing file at `path` with SQLite's defensive settings
    /// and nothing else: opening a vault (`+OpenPolicy`) and creating one (`+Creation`)
    /// decide the access and the pragmas.
    init(connectingTo path: String, access: SQLiteConnection.Access, busyTimeoutMilliseconds: Int32, readOnlyBecause reason: StorageError?) throws(StorageError) {
        self.path = path
        readOnlyReason = reason
        do {
            connection = try SQLiteConnection(path: path, access: access)
            try connection.configureDefensively(busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        } catch {
            throw error.translated(path: path)
        }
    }
}
