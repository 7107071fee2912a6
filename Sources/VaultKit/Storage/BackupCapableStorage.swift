/// Storage that can copy itself, consistently, into a new vault file at a path: what
/// `Vault.backup(to:)` needs. A file-only concern kept outside ``VaultStorage``, so the
/// engine asks for this capability instead of for a concrete engine's type.
protocol BackupCapableStorage: VaultStorage {
    /// Writes a consistent copy of the whole vault into the new, empty file `destination`.
    func backup(into destination: String) throws(StorageError)
}
