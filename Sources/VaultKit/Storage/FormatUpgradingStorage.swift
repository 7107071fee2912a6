/// A storage that may hold a vault of a format older than the current one, and so can add
/// what the later formats store (``FormatUpgrade``). Only the vault file has such vaults;
/// an engine that began at the current format leaves this out, and an older format found
/// in it is refused as a changed schema (its ``VaultStorage/checkSchema(formatVersion:)``).
package protocol FormatUpgradingStorage: VaultStorage {
    /// Adds format 2's manifest storage to a format-1 vault (the caller fills it in).
    func addManifestSchema() throws(StorageError)
    /// Adds format 3's generation counter, starting at `generation`.
    func addGenerationTable(startingAt generation: UInt64) throws(StorageError)
    /// Whether the vault was opened for reading only (read-only media, a directory the
    /// user cannot write): a format-3 vault is then read as it is, not upgraded.
    var isReadOnly: Bool { get }
}
