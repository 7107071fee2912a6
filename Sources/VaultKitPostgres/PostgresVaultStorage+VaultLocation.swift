import VaultKit

extension PostgresVaultStorage {
    /// A vault in PostgreSQL is named by its URL without the password.
    package var vaultLocation: Vault.Location { .engine(url: location) }
}
