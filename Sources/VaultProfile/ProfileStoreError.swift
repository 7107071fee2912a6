/// What can go wrong with a ``ProfileStore``, beyond the storage's own errors
/// (``VaultKit/VaultError``), which are passed through unchanged.
///
/// No case carries a profile, an account name or a secret.
public enum ProfileStoreError: Error, Equatable, Hashable, Sendable {
    /// No account is signed in: call ``ProfileStore/start(account:)`` first.
    case notSignedIn
    /// The signed-in account has no profile yet (no snapshot, or an unreadable one):
    /// give it one with ``ProfileStore/replace(with:)``.
    case noProfile
    /// The store has shut down and accepts no more changes.
    case shutDown
    /// The account was signed out, or another account signed in, while this call waited.
    case superseded
    /// The final write on shutdown did not finish within the configured deadline.
    case shutdownDeadlineExceeded
    /// The profile could not be encoded as JSON; the text is the type of the encoding error.
    case encodingFailed(String)
}

extension ProfileStoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notSignedIn: "no account is signed in to the profile store"
        case .noProfile: "the signed-in account has no profile yet"
        case .shutDown: "the profile store has shut down"
        case .superseded: "the account changed while the call waited"
        case .shutdownDeadlineExceeded: "the final profile snapshot was not written within the shutdown deadline"
        case .encodingFailed(let type): "the profile could not be encoded (\(type))"
        }
    }
}
