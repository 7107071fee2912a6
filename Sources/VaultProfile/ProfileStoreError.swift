import VaultKit

/// What can go wrong with a ``ProfileStore``, beyond the storage's own errors
/// (`VaultError`), which are passed through unchanged.
///
/// A struct rather than an enum so that a later VaultProfile can add codes without breaking
/// a client's `switch`: switch over ``code`` with a `default`, or compare a whole error
/// (`catch ProfileStoreError.shutDown`, `#expect(throws: ProfileStoreError.notSignedIn)`).
/// No error carries a profile, an account name or a secret.
public struct ProfileStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// What kind of failure a ``ProfileStoreError`` is: a growable set of static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, NamedCode {
        /// The code's stable name, as in `ProfileStoreError.Code.notSignedIn`.
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// No account is signed in: call ``ProfileStore/start(account:)`` first.
        public static let notSignedIn = Code(rawValue: "notSignedIn")
        /// The signed-in account has no profile yet (no snapshot, or an unreadable one):
        /// give it one with ``ProfileStore/replace(with:)``.
        public static let noProfile = Code(rawValue: "noProfile")
        /// The store has shut down and accepts no more changes.
        public static let shutDown = Code(rawValue: "shutDown")
        /// The account was signed out, or another account signed in, while this call waited.
        public static let superseded = Code(rawValue: "superseded")
        /// The final write on shutdown did not finish within the configured deadline.
        public static let shutdownDeadlineExceeded = Code(rawValue: "shutdownDeadlineExceeded")
        /// The profile's `encode(to:)` threw, so there is no snapshot to write.
        public static let encodingFailed = Code(rawValue: "encodingFailed")
    }

    public var description: String {
        switch code {
        case .notSignedIn: "no account is signed in to the profile store"
        case .noProfile: "the signed-in account has no profile yet"
        case .shutDown: "the profile store has shut down"
        case .superseded: "the account changed while the call waited"
        case .shutdownDeadlineExceeded: "the final profile snapshot was not written within the shutdown deadline"
        case .encodingFailed: "the profile could not be encoded"
        default: "profile store error \(code)"
        }
    }
}

// Members spelled like enum cases, so `throw ProfileStoreError.shutDown` reads as an enum's
// would: the type is a struct so that it can gain codes without breaking a client's `switch`.
extension ProfileStoreError {
    public static let notSignedIn = ProfileStoreError(.notSignedIn)
    public static let noProfile = ProfileStoreError(.noProfile)
    public static let shutDown = ProfileStoreError(.shutDown)
    public static let superseded = ProfileStoreError(.superseded)
    public static let shutdownDeadlineExceeded = ProfileStoreError(.shutdownDeadlineExceeded)
    /// The profile could not be encoded; the encoder's error is logged by its type only,
    /// since its text may quote a value of the profile.
    public static let encodingFailed = ProfileStoreError(.encodingFailed)

    /// Lets `catch ProfileStoreError.shutDown` match the untyped errors of ``ProfileStore``.
    public static func ~= (pattern: ProfileStoreError, error: any Error) -> Bool {
        (error as? ProfileStoreError) == pattern
    }
}
