/// Bringing a vault of an older format to the current one (`FormatUpgrade`): only a file
/// can hold such vaults.
extension VaultDatabase: FormatUpgradingStorage {
    var isReadOnly: Bool { readOnlyReason != nil }

    /// Adds format 3's generation table, counting from `generation` (format upgrade).
    func addGenerationTable(startingAt generation: UInt64) throws(StorageError) {
        try run(Self.generationTable)
        try run("INSERT INTO vault_generation (singleton, generation) VALUES (1, \(generation))")
    }

    /// Turns a format-1 file into format 2's schema (the caller fills the manifest in,
    /// in the same transaction).
    func addManifestSchema() throws(StorageError) {
        try run("ALTER TABLE vault_header ADD COLUMN manifest_root BLOB")
        try run("ALTER TABLE vault_header ADD COLUMN manifest_tag BLOB")
        try run(Self.manifestTable)
    }

    func setFormatVersion(_ version: Int) throws(StorageError) {
        try run("UPDATE vault_header SET format_version = \(version) WHERE singleton = 1")
        try run("PRAGMA user_version = \(version)")
    }
}
