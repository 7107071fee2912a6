extension VaultDatabase {
    /// A SQLite vault is one file.
    var vaultLocation: Vault.Location { .file(path: path) }
}
