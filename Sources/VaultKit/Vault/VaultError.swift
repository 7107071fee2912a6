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
    /// The vault file holds an older state than one this user has already seen or
    /// written (see ``Vault/useRollbackGuard(_:acceptingCurrentState:)``): the file was
    /// replaced with an older copy, or lost commits from its `-wal`.
    case rolledBack(path: String, seenGeneration: UInt64, fileGeneration: UInt64)
    /// The operating system refused an operation on this path; `errno` says why.
    case io(path: String, errno: Int32)
    /// An argument was rejected before anything was touched; the text says which and why.
    case invalidArgument(String)
    /// Another process held the vault's write lock for longer than the busy timeout.
    case busy(path: String)
    /// The vault file, its directory or one of SQLite's side files (`-wal`, `-shm`) is
    /// writable by group or others, so someone else could replace it or plant a side
    /// file; or a side file allows more than the vault file does.
    case insecurePermissions(path: String, mode: UInt32)
    /// The vault file, or a side file, belongs to another user (uid); or the directory
    /// belongs to a user other than this one or root.
    case untrustedOwner(path: String, uid: UInt32)
    /// The vault's path (or a side file's) is a symbolic link; VaultKit opens only the
    /// file itself, so a link planted in its place cannot redirect it.
    case symbolicLink(path: String)
    /// Another process re-keyed the vault and this handle cannot follow; open it again.
    case keyChanged
    /// The vault was closed with ``Vault/close()``.
    case closed
    /// A ``VaultBatch`` was used after its ``Vault/batch(_:)`` closure returned, or from
    /// another thread than the closure's: its writes would belong to no transaction.
    case batchEnded
    /// The `Vault` was called from inside one of its own ``Vault/batch(_:)`` closures;
    /// use the ``VaultBatch`` given to the closure instead.
    case reentrantCall
    /// The stored secret is not valid UTF-8, so it cannot be returned as a `String`.
    case secretNotUTF8
    /// libsodium could not be initialised (`sodium_init` failed).
    case cryptoUnavailable
    /// Argon2id could not allocate the memory its parameters ask for.
    case keyDerivationFailed
    /// A value given to ``Vault/setValue(_:schemaVersion:service:account:label:generic:)``
    /// could not be encoded (its `encode(to:)` threw, or it holds a non-finite number).
    case valueNotEncodable
    /// The item's secret is not a VaultKit value of the requested type: it was written
    /// with ``Vault/set(_:service:account:label:generic:)-(String,_,_,_,_)`` rather than as a
    /// value, or it decodes as another type.
    case valueNotDecodable
    /// The item holds a value in a newer value encoding than this version reads.
    case unsupportedValueEncoding(version: Int)
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
        case .rolledBack(let path, let seen, let found):
            if seen == found {
                "\(path) is not the state this user last saw at generation \(seen): it was replaced, or lost commits and was written again"
            } else {
                "\(path) is older than a state this user has seen (generation \(found), seen \(seen)): it was replaced with an older copy or lost commits from its -wal"
            }
        case .io(let path, let code): "\(path): \(String(cString: strerror(code)))"
        case .invalidArgument(let reason): "invalid argument: \(reason)"
        case .busy(let path): "vault is locked by another process for too long: \(path)"
        case .insecurePermissions(let path, let mode):
            if (mode & 0o170000) == 0o040000 {
                "refusing the vault's directory \(path): permissions \(String(mode & 0o7777, radix: 8)) let group or others write it (chmod go-w, or move the vault)"
            } else if mode & 0o022 == 0 {
                "refusing \(path): permissions \(String(mode & 0o777, radix: 8)) allow more than the vault file does"
            } else {
                "refusing \(path): permissions \(String(mode & 0o777, radix: 8)) let group or others write it (chmod 600)"
            }
        case .untrustedOwner(let path, let uid): "refusing \(path): it belongs to another user (uid \(uid))"
        case .symbolicLink(let path): "refusing \(path): it is a symbolic link; use the file's real path"
        case .keyChanged: "the vault was re-keyed by another process; open it again"
        case .closed: "the vault is closed"
        case .batchEnded: "a VaultBatch can only be used inside its batch closure, on the closure's thread"
        case .reentrantCall: "the vault was called from inside its own batch closure; use the VaultBatch instead"
        case .secretNotUTF8: "the secret is not valid UTF-8 text"
        case .cryptoUnavailable: "libsodium could not be initialised"
        case .keyDerivationFailed: "not enough memory for the passphrase key derivation"
        case .valueNotEncodable: "the value could not be encoded"
        case .valueNotDecodable: "the stored secret is not a value of the requested type"
        case .unsupportedValueEncoding(let version): "unsupported value encoding version \(version)"
        }
    }
}
