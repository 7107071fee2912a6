import VaultKit

/// A lock every host on the vault sees, for work that must run once across hosts.
extension PostgresVaultStorage {
    package func sharedLock(named name: String) -> (any SharedLock)? {
        PostgresAdvisoryLock(postgresLocation, name: name)
    }
}
