/// Vaults at URLs of a registered storage engine (``VaultEngines``): the same engine,
/// format and guarantees as the vault file, on that engine's storage.
///
/// These calls block (network round trips, and Argon2id for a passphrase): from async
/// code, call them off the cooperative pool.
extension Vault {
    /// Creates a vault unlocked by a raw key at `url`.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` (``VaultError/Reason/noEngineForURL``)
    ///   when no registered engine has the URL's scheme; ``VaultError/vaultAlreadyExists(path:)``
    ///   when a vault is there already; ``VaultError/io(path:errno:)`` when the storage
    ///   cannot be reached.
    public static func create(url: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try create(in: storage(url, busyTimeout: busyTimeout), key: key)
    }

    /// Creates a vault protected by a passphrase (Argon2id with `kdf`) at `url`.
    public static func create(url: String, passphrase: SecretBytes, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try create(in: storage(url, busyTimeout: busyTimeout), passphrase: passphrase, kdf: kdf)
    }

    /// Opens the vault at `url` with its raw key.
    ///
    /// - Throws: ``VaultError/vaultNotFound(path:)`` when there is no vault at `url`, and
    ///   the errors of ``Vault/open(at:key:busyTimeout:)-fe85``.
    public static func open(url: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(url, busyTimeout: busyTimeout), key: key)
    }

    /// Opens the vault at `url` with its passphrase.
    public static func open(url: String, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(url, busyTimeout: busyTimeout), passphrase: passphrase)
    }

    /// Opens the vault at `url` with this host's key pair, if its host wraps are signed by
    /// `identity`, the vault identity this host pinned (docs/FORMAT.md section 12).
    public static func open(url: String, hostKey: HostKeyPair, identity: VaultIdentity, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(storage(url, busyTimeout: busyTimeout), hostKey: hostKey, identities: [identity])
    }

    /// The storage at `url`, from the engine registered for its scheme.
    private static func storage(_ url: String, busyTimeout: Duration) throws(VaultError) -> any VaultStorage {
        guard let location = try VaultEngines.location(url) else { throw .invalidArgument(.noEngineForURL) }
        return try location.storage(busyTimeout: busyTimeout)
    }
}
