#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything that can go wrong with a vault, as one flat, comparable enum.
///
/// No case ever carries a secret: not the passphrase, not a key, not an item's secret.
/// Item errors carry no service or account either, because those names are stored
/// encrypted and an error may end up in a log; the caller already knows them.
public enum VaultError: Error, Equatable, Hashable, Sendable {
    /// The passphrase or key does not unlock this vault.
    case wrongPassphrase
    /// No item exists for this service and account.
    case itemNotFound
    /// An item already exists for this service and account.
    case duplicateItem
    /// There is no file at this path.
    case vaultNotFound(path: String)
    /// A file already exists at this path; a vault is never created over it.
    case vaultAlreadyExists(path: String)
    /// The file at this path is not a VaultKit vault.
    case notAVault(path: String)
    /// The vault was written by a newer VaultKit whose format this version cannot read.
    case unsupportedFormatVersion(Int)
    /// The vault is of an old format that has nothing to verify its rows with (format 1,
    /// before the manifest): open it with ``Vault/upgrade(at:passphrase:busyTimeout:)``
    /// (`vault upgrade`) if you trust the file as it is.
    case formatUpgradeRequired(version: Int)
    /// The file's storage structure is damaged; the reason names what, never a value.
    case corrupted(reason: String)
    /// Authentication failed: an item or the header was modified, moved or replaced.
    case tampered(reason: String)
    /// The operating system refused an operation on this path; `errno` says why.
    case io(path: String, errno: Int32)
    /// An argument was rejected before anything was touched; the text says which and why.
    case invalidArgument(String)
    /// Another process held the vault's write lock for longer than the busy timeout.
    case busy(path: String)
    /// The vault file is writable by group or others, so anyone could replace it.
    case insecurePermissions(path: String, mode: UInt32)
    /// Another process re-keyed the vault and this handle cannot follow; open it again.
    case keyChanged
    /// The vault was closed with ``Vault/close()``.
    case closed
    /// The stored secret is not valid UTF-8, so it cannot be returned as a `String`.
    case secretNotUTF8
    /// libsodium could not be initialised (`sodium_init` failed).
    case cryptoUnavailable
    /// Argon2id could not allocate the memory its parameters ask for.
    case keyDerivationFailed
}

extension VaultError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .wrongPassphrase: "wrong passphrase or key"
        case .itemNotFound: "item not found"
        case .duplicateItem: "item already exists"
        case .vaultNotFound(let path): "no vault at \(path)"
        case .vaultAlreadyExists(let path): "a file already exists at \(path)"
        case .notAVault(let path): "not a vault: \(path)"
        case .unsupportedFormatVersion(let version): "unsupported vault format version \(version)"
        case .formatUpgradeRequired(let version): "vault format \(version) cannot be verified; upgrade it explicitly (vault upgrade) if you trust the file as it is"
        case .corrupted(let reason): "vault is corrupted: \(reason)"
        case .tampered(let reason): "vault is tampered: \(reason)"
        case .io(let path, let code): "\(path): \(String(cString: strerror(code)))"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .busy(let path): "vault is locked by another process for too long: \(path)"
        case .insecurePermissions(let path, let mode): "refusing \(path): permissions \(String(mode & 0o777, radix: 8)) let group or others write it (chmod 600)"
        case .keyChanged: "the vault was re-keyed by another process; open it again"
        case .closed: "the vault is closed"
        case .secretNotUTF8: "the secret is not valid UTF-8 text"
        case .cryptoUnavailable: "libsodium could not be initialised"
        case .keyDerivationFailed: "not enough memory for the passphrase key derivation"
        }
    }
}
