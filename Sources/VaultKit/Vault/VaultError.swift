/// Everything that can go wrong with a vault: a ``Code`` saying what kind of failure,
/// a ``Reason`` for the damaged, tampered and refused-argument kinds, and the typed
/// context the failure has (a path, an `errno`, a format version, ...).
///
/// A struct rather than an enum so that a later VaultKit can add codes and reasons
/// without breaking a client's `switch`: switch over ``code`` (with a `default`), or
/// compare a whole error (`catch VaultError.itemNotFound`, `#expect(throws:)`).
///
/// No error ever carries a secret: not the passphrase, not a key, not an item's secret.
/// Item errors carry no service or account either, because those names are stored
/// encrypted and an error may end up in a log; the caller already knows them. The
/// ``description`` is derived from the code, reason and context alone, never from
/// free text.
public struct VaultError: Error, Hashable, Sendable {
    /// What kind of failure this is.
    public let code: Code
    /// Why the vault is ``Code/corrupted`` or ``Code/tampered``, or why an argument
    /// was refused (``Code/invalidArgument``); `nil` for the other codes.
    public let reason: Reason?
    /// The typed context, boxed (``ErrorContext``): `nil` for the many errors without one.
    private let context: ErrorContext<Context>?

    /// The file the failure is about, when it is about one.
    public var path: String? { context?.fields.path }
    /// The operating system's error number, for ``Code/io``.
    public var errno: Int32? { context?.fields.errno }
    /// The format (or value encoding) version, for ``Code/unsupportedFormatVersion``,
    /// ``Code/formatUpgradeRequired`` and ``Code/unsupportedValueEncoding``.
    public var formatVersion: Int? { context?.fields.formatVersion }
    /// The file's mode bits, for ``Code/insecurePermissions``.
    public var mode: UInt32? { context?.fields.mode }
    /// The file owner's user id, for ``Code/untrustedOwner``.
    public var uid: UInt32? { context?.fields.uid }
    /// The newest generation this user has seen, for ``Code/rolledBack``.
    public var seenGeneration: UInt64? { context?.fields.seenGeneration }
    /// The generation the file holds, for ``Code/rolledBack``.
    public var fileGeneration: UInt64? { context?.fields.fileGeneration }
    /// The length given, for a ``Reason/keyLength`` argument (never the bytes).
    public var byteCount: Int? { context?.fields.byteCount }

    init(
        _ code: Code, reason: Reason? = nil, path: String? = nil, errno: Int32? = nil, formatVersion: Int? = nil,
        mode: UInt32? = nil, uid: UInt32? = nil, seenGeneration: UInt64? = nil, fileGeneration: UInt64? = nil,
        byteCount: Int? = nil
    ) {
        self.code = code
        self.reason = reason
        let fields = Context(
            path: path, errno: errno, formatVersion: formatVersion, mode: mode, uid: uid,
            seenGeneration: seenGeneration, fileGeneration: fileGeneration, byteCount: byteCount
        )
        context = .boxing(fields, unlessEqualTo: Context())
    }

    /// The optional context fields.
    private struct Context: Hashable, Sendable {
        var path: String?
        var errno: Int32?
        var formatVersion: Int?
        var mode: UInt32?
        var uid: UInt32?
        var seenGeneration: UInt64?
        var fileGeneration: UInt64?
        var byteCount: Int?
    }
}

extension VaultError {
    /// This error about `path` instead.
    func naming(_ path: String) -> VaultError {
        VaultError(
            code, reason: reason, path: path, errno: errno, formatVersion: formatVersion, mode: mode, uid: uid,
            seenGeneration: seenGeneration, fileGeneration: fileGeneration, byteCount: byteCount
        )
    }
}

// Members spelled like enum cases, so `throw .itemNotFound`, `catch VaultError.closed` and
// `VaultError.io(path:errno:)` read as an enum's would, while the type stays a struct that
// can gain codes without breaking a client's `switch`.
extension VaultError {
    /// The passphrase or key does not unlock this vault.
    public static let wrongPassphrase = VaultError(.wrongPassphrase)
    /// No item exists for this service and account.
    public static let itemNotFound = VaultError(.itemNotFound)
    /// The item has no kept version of this number (never written, trimmed by the
    /// retention, or purged), nor is it the current item's.
    public static let versionNotFound = VaultError(.versionNotFound)
    /// An item already exists for this service and account.
    public static let duplicateItem = VaultError(.duplicateItem)
    /// There is no file at this path.
    public static func vaultNotFound(path: String) -> VaultError { VaultError(.vaultNotFound, path: path) }
    /// A file already exists at this path (a vault, at a storage engine's URL); a vault
    /// is never created over it.
    public static func vaultAlreadyExists(path: String) -> VaultError { VaultError(.vaultAlreadyExists, path: path) }
    /// The file at this path is not a VaultKit vault.
    public static func notAVault(path: String) -> VaultError { VaultError(.notAVault, path: path) }
    /// The vault was written by a newer VaultKit whose format this version cannot read.
    public static func unsupportedFormatVersion(_ version: Int) -> VaultError {
        VaultError(.unsupportedFormatVersion, formatVersion: version)
    }
    /// The vault is of an old format that has nothing to verify its rows with (format 1,
    /// before the manifest): open it with ``Vault/upgrade(at:passphrase:busyTimeout:)-280ty``
    /// (`vault upgrade`) if you trust the file as it is.
    public static func formatUpgradeRequired(version: Int) -> VaultError {
        VaultError(.formatUpgradeRequired, formatVersion: version)
    }
    /// The file's storage structure is damaged; the reason names what, never a value.
    public static func corrupted(reason: Reason) -> VaultError { VaultError(.corrupted, reason: reason) }
    /// Authentication failed: an item or the header was modified, moved or replaced.
    public static func tampered(reason: Reason) -> VaultError { VaultError(.tampered, reason: reason) }
    /// The vault file holds an older state than one this user has already seen or
    /// written, or one under a master key the vault has retired, whatever its generation
    /// (see ``Vault/useRollbackGuard(_:acceptingCurrentState:)-5nooc``).
    public static func rolledBack(path: String, seenGeneration: UInt64, fileGeneration: UInt64) -> VaultError {
        VaultError(.rolledBack, path: path, seenGeneration: seenGeneration, fileGeneration: fileGeneration)
    }
    /// The rollback guard's record of this vault (or the guard's key) at this path exists
    /// but is not one this user's guard wrote: damaged, replaced, or of another key. It
    /// is never taken as missing, which would switch the guard off; accept the vault's
    /// current state on purpose with
    /// ``Vault/useRollbackGuard(_:acceptingCurrentState:)-5nooc`` `acceptingCurrentState`.
    public static func rollbackRecordInvalid(path: String) -> VaultError { VaultError(.rollbackRecordInvalid, path: path) }
    /// The calling task was cancelled while its async call waited for the vault's queue,
    /// so the call's work never started: nothing was read or written.
    public static let cancelled = VaultError(.cancelled)
    /// The operating system refused an operation on this path; `errno` says why.
    public static func io(path: String, errno: Int32) -> VaultError { VaultError(.io, path: path, errno: errno) }
    /// An argument was rejected before anything was touched; the reason says which and why.
    public static func invalidArgument(_ reason: Reason) -> VaultError { VaultError(.invalidArgument, reason: reason) }
    /// A key of the wrong length was given; only its length is kept.
    public static func invalidKeyLength(byteCount: Int) -> VaultError {
        VaultError(.invalidArgument, reason: .keyLength, byteCount: byteCount)
    }
    /// Another process held the vault's write lock for longer than the busy timeout.
    public static func busy(path: String) -> VaultError { VaultError(.busy, path: path) }
    /// The vault file, its directory or a side file is writable by group or others, or a
    /// side file allows more than the vault file does.
    public static func insecurePermissions(path: String, mode: UInt32) -> VaultError {
        VaultError(.insecurePermissions, path: path, mode: mode)
    }
    /// The vault file, or a side file, belongs to another user; or the directory belongs
    /// to a user other than this one or root.
    public static func untrustedOwner(path: String, uid: UInt32) -> VaultError {
        VaultError(.untrustedOwner, path: path, uid: uid)
    }
    /// The vault's path (or a side file's) is a symbolic link.
    public static func symbolicLink(path: String) -> VaultError { VaultError(.symbolicLink, path: path) }
    /// Another process changed the vault's keys in a way this handle cannot follow: the
    /// passphrase, key or host key it was opened with no longer opens the vault (a re-key
    /// with the same passphrase or key is followed). Open it again with the current one.
    public static let keyChanged = VaultError(.keyChanged)
    /// The vault was closed with ``Vault/close()-hsjn``.
    public static let closed = VaultError(.closed)
    /// A ``VaultBatch`` was used after its closure returned, or from another thread.
    public static let batchEnded = VaultError(.batchEnded)
    /// The `Vault` was called from inside one of its own ``Vault/batch(_:)->_`` closures.
    public static let reentrantCall = VaultError(.reentrantCall)
    /// The stored secret is not valid UTF-8, so it cannot be returned as a `String`.
    public static let secretNotUTF8 = VaultError(.secretNotUTF8)
    /// libsodium could not be initialised (`sodium_init` failed).
    public static let cryptoUnavailable = VaultError(.cryptoUnavailable)
    /// Argon2id could not allocate the memory its parameters ask for.
    public static let keyDerivationFailed = VaultError(.keyDerivationFailed)
    /// A value could not be encoded (its `encode(to:)` threw, or it holds a non-finite number).
    public static let valueNotEncodable = VaultError(.valueNotEncodable)
    /// The item's secret is not a VaultKit value of the requested type.
    public static let valueNotDecodable = VaultError(.valueNotDecodable)
    /// The item holds a value in a newer value encoding than this version reads.
    public static func unsupportedValueEncoding(version: Int) -> VaultError {
        VaultError(.unsupportedValueEncoding, formatVersion: version)
    }
}

extension VaultError {
    /// Lets `catch VaultError.itemNotFound` match an untyped error: equal when it is a
    /// ``VaultError`` equal to the pattern.
    public static func ~= (pattern: VaultError, error: any Error) -> Bool {
        (error as? VaultError) == pattern
    }
}
