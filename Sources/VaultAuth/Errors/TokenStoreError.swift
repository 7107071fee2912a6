#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

/// Why tokens (or stored credentials) could not be read or written: a ``Code`` and the
/// typed context it has, the vault's own `VaultError` or the lock file's path and
/// `errno`. Never carries a token.
///
/// A struct rather than an enum so that new codes do not break a client's `switch`: switch
/// over ``code`` with a `default`, or compare a whole error
/// (`#expect(throws: TokenStoreError.vault(.closed))`).
public struct TokenStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// The vault's error, for ``Code/vault``.
    public let vaultError: VaultError?
    /// The refresh lock file, for ``Code/lock``.
    public let path: String?
    /// The operating system's error number, for ``Code/lock``.
    public let errno: Int32?

    init(_ code: Code, vaultError: VaultError? = nil, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.vaultError = vaultError
        self.path = path
        self.errno = errno
    }

    /// What kind of failure a ``TokenStoreError`` is: a growable set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `TokenStoreError.Code.vault`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The vault failed; see ``TokenStoreError/vaultError``.
        public static let vault = Code(rawValue: "vault")
        /// The stored item is not a token set this version of VaultAuth can read.
        public static let undecodable = Code(rawValue: "undecodable")
        /// The cross-process refresh lock beside the vault could not be taken.
        public static let lock = Code(rawValue: "lock")
    }

    public var description: String {
        switch code {
        case .vault: "token storage failed: \(vaultError.map { "\($0)" } ?? "vault error")"
        case .undecodable: "the stored tokens are not in a format this version can read"
        case .lock: "cannot take the refresh lock \(path ?? "?"): \(String(cString: strerror(errno ?? 0)))"
        default: "token storage error \(code)"
        }
    }
}

// Members spelled like enum cases, so call sites read as an enum's would: the type is a
// struct so that it can gain codes without breaking a client's `switch`.
extension TokenStoreError {
    /// The vault failed with `error`.
    public static func vault(_ error: VaultError) -> TokenStoreError { TokenStoreError(.vault, vaultError: error) }
    /// The stored item is not a token set this version of VaultAuth can read.
    public static let undecodable = TokenStoreError(.undecodable)
    /// The refresh lock file could not be opened or locked (`EPERM`: it is not a regular file
    /// owned by this user).
    public static func lock(path: String, errno: Int32) -> TokenStoreError { TokenStoreError(.lock, path: path, errno: errno) }

    /// Lets `catch TokenStoreError.undecodable` match an untyped error.
    public static func ~= (pattern: TokenStoreError, error: any Error) -> Bool {
        (error as? TokenStoreError) == pattern
    }
}
