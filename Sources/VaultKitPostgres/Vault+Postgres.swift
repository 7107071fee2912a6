import VaultKit

/// Vaults in PostgreSQL: the same engine, format and guarantees as the file vault
/// (docs/FORMAT.md, "PostgreSQL"), on ``PostgresVaultStorage``. Several hosts may open
/// the same vault; their writes serialise on the vault's header row.
///
/// These calls block (network round trips, and Argon2id for a passphrase): from async
/// code, call them off the cooperative pool.
extension Vault {
    /// Creates a vault unlocked by a raw key in the database at `location`, creating
    /// VaultKit's tables there if they are missing.
    ///
    /// - Parameter busyTimeout: how long a write waits for another connection's write.
    /// - Throws: ``VaultError/vaultAlreadyExists(path:)`` when the database already holds
    ///   a vault of that name; ``VaultError/io(path:errno:)`` when the server cannot be
    ///   reached or refuses the session (its reason in the path, without the password).
    public static func create(postgres location: PostgresVaultLocation, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try create(in: storage(location, busyTimeout: busyTimeout), key: key)
    }

    /// Creates a vault protected by a passphrase (Argon2id with `kdf`) in the database at `location`.
    public static func create(postgres location: PostgresVaultLocation, passphrase: SecretBytes, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try create(in: storage(location, busyTimeout: busyTimeout), passphrase: passphrase, kdf: kdf)
    }

    /// Opens the vault at `location` with its raw key.
    ///
    /// - Throws: ``VaultError/vaultNotFound(path:)`` when the database holds no vault of
    ///   that name, and the errors of ``Vault/open(at:key:busyTimeout:)``.
    public static func open(postgres location: PostgresVaultLocation, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(location, busyTimeout: busyTimeout), key: key)
    }

    /// Opens the vault at `location` with its passphrase.
    public static func open(postgres location: PostgresVaultLocation, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(location, busyTimeout: busyTimeout), passphrase: passphrase)
    }

    /// Opens the vault at `location` with this host's key pair, if its host wraps are
    /// signed by `identity`, the vault identity this host pinned (docs/FORMAT.md section 12).
    ///
    /// - Throws: ``VaultError/wrongPassphrase`` when the vault has no wrap for this host,
    ///   ``VaultError/tampered(reason:)`` when its wraps are not signed by `identity`, and
    ///   the errors of `Vault.open(at:hostKey:identity:busyTimeout:)`.
    public static func open(postgres location: PostgresVaultLocation, hostKey: HostKeyPair, identity: VaultIdentity, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(postgres: location, hostKey: hostKey, identities: [identity], busyTimeout: busyTimeout)
    }

    /// Opens with a host key whose wraps may be signed by any of `identities` (the CLI's pin file).
    package static func open(postgres location: PostgresVaultLocation, hostKey: HostKeyPair, identities: [VaultIdentity], busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(location, busyTimeout: busyTimeout), hostKey: hostKey, identities: identities)
    }

    /// Replaced by `open(postgres:hostKey:identity:busyTimeout:)`: a host key alone cannot
    /// tell its vault from one an attacker built for its public key.
    @available(*, unavailable, renamed: "open(postgres:hostKey:identity:busyTimeout:)", message: "pin the vault's identity (Vault.identity(), 'vault host identity')")
    public static func open(postgres location: PostgresVaultLocation, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        throw .tampered(reason: .vaultIdentityNotPinned)
    }

    private static func storage(_ location: PostgresVaultLocation, busyTimeout: Duration) throws(VaultError) -> PostgresVaultStorage {
        try PostgresVaultStorage.connecting(location, busyTimeout: busyTimeout)
    }
}
