/// How hard Argon2id works to turn a passphrase into the vault's key-encryption key.
///
/// The presets are libsodium's: ``interactive`` (64 MiB, 2 passes, about 70 ms here),
/// ``moderate`` (256 MiB, 3 passes, about 0.5 s) and ``sensitive`` (1 GiB, 4 passes,
/// about 3 s). The parameters used are recorded in the vault file, so a vault
/// created with one preset opens on any machine, and ``Vault/changePassphrase(to:kdf:)-9rpt6``
/// can raise them later.
///
/// For example, cheap parameters for tests:
///
/// ```swift
/// let fast = try KDFParameters(opsLimit: 1, memoryLimit: 8 * 1024)
/// ```
public struct KDFParameters: Sendable, Hashable, Codable {
    /// Argon2id passes over memory (libsodium's `opslimit`).
    public let opsLimit: UInt64
    /// Bytes of memory Argon2id fills (libsodium's `memlimit`).
    public let memoryLimit: Int

    /// The smallest values libsodium accepts.
    public static let minimumOpsLimit: UInt64 = 1
    public static let minimumMemoryLimit = 8 * 1024

    /// Upper bounds VaultKit accepts, in the API and when reading a file, so a damaged
    /// or hostile header cannot make opening a vault take hours or exhaust memory: at
    /// most 16 passes over 2 GiB, 8 times the work of ``sensitive`` (about 25 s here)
    /// before a wrong passphrase can be reported. (They were 64 passes over 4 GiB, 64
    /// times ``sensitive``, before format 3.)
    public static let maximumOpsLimit: UInt64 = 16
    public static let maximumMemoryLimit = 2 * 1024 * 1024 * 1024

    /// Validates explicit limits.
    ///
    /// - Throws: ``VaultError/Code/invalidArgument`` when a limit is outside
    ///   `minimum...maximum`.
    public init(opsLimit: UInt64, memoryLimit: Int) throws(VaultError) {
        guard (Self.minimumOpsLimit...Self.maximumOpsLimit).contains(opsLimit) else {
            throw VaultError.invalidArgument(.kdfOpsLimitOutOfRange)
        }
        guard (Self.minimumMemoryLimit...Self.maximumMemoryLimit).contains(memoryLimit) else {
            throw VaultError.invalidArgument(.kdfMemoryLimitOutOfRange)
        }
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
    }

    private init(unchecked opsLimit: UInt64, _ memoryLimit: Int) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
    }

    /// For a passphrase typed at every start: 64 MiB, 2 passes.
    public static let interactive = KDFParameters(unchecked: 2, 64 * 1024 * 1024)
    /// The default: 256 MiB, 3 passes.
    public static let moderate = KDFParameters(unchecked: 3, 256 * 1024 * 1024)
    /// For vaults opened rarely, such as offline backups: 1 GiB, 4 passes.
    public static let sensitive = KDFParameters(unchecked: 4, 1024 * 1024 * 1024)
}
