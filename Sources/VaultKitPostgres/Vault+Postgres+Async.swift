import VaultKit

// MARK: Async twins (the file vault's are in VaultKit's Vault+Async.swift)

/// Each runs the blocking call (network round trips, Argon2id for a passphrase) on a
/// queue of its own, so a task awaiting it never holds a cooperative-pool thread.
extension Vault {
    public static func create(postgres location: PostgresVaultLocation, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try create(postgres: location, key: key, busyTimeout: busyTimeout) }
    }

    public static func create(postgres location: PostgresVaultLocation, passphrase: SecretBytes, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try create(postgres: location, passphrase: passphrase, kdf: kdf, busyTimeout: busyTimeout) }
    }

    public static func open(postgres location: PostgresVaultLocation, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(postgres: location, key: key, busyTimeout: busyTimeout) }
    }

    public static func open(postgres location: PostgresVaultLocation, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(postgres: location, passphrase: passphrase, busyTimeout: busyTimeout) }
    }

    public static func open(postgres location: PostgresVaultLocation, hostKey: HostKeyPair, identity: VaultIdentity, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(postgres: location, hostKey: hostKey, identity: identity, busyTimeout: busyTimeout) }
    }

    @available(*, unavailable, renamed: "open(postgres:hostKey:identity:busyTimeout:)", message: "pin the vault's identity (Vault.identity(), 'vault host identity')")
    public static func open(postgres location: PostgresVaultLocation, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        throw .tampered(reason: .vaultIdentityNotPinned)
    }
}
