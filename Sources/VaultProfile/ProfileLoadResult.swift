/// What ``ProfileStore/start(account:)`` found in the vault for the account.
///
/// An app update that changes the profile type never crashes the app and never silently
/// deletes the user's snapshot: a snapshot of another schema goes to the migration hook,
/// and the outcome is reported here.
public enum ProfileLoadResult<Profile: Sendable>: Sendable {
    /// There is no snapshot: the account never signed in here, or signed out.
    case none
    /// The snapshot was decoded with the current schema.
    case loaded(Profile)
    /// The snapshot had another schema (or no longer decoded) and the migration hook
    /// turned it into this profile, which has already been written back.
    case migrated(Profile, fromVersion: Int)
    /// The snapshot could not be read and the migration hook chose to discard it: it was deleted.
    case discarded(fromVersion: Int)
    /// The snapshot could not be read and was left untouched in the vault (the hook said
    /// ``ProfileMigrationDecision/keep`` or threw). The store has no profile until the
    /// app gives it one with ``ProfileStore/replace(with:)``, which overwrites the snapshot.
    case unreadable(storedVersion: Int)

    /// The profile the store holds after loading, if any.
    public var profile: Profile? {
        switch self {
        case .loaded(let profile), .migrated(let profile, _): profile
        case .none, .discarded, .unreadable: nil
        }
    }
}
