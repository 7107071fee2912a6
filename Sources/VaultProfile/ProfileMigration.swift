/// What to do with a stored snapshot that the current profile type cannot read.
public enum ProfileMigrationDecision<Profile: Sendable>: Sendable {
    /// Use this profile instead; it is written back with the current schema version.
    case migrate(Profile)
    /// Delete the old snapshot; the account starts without a profile.
    case discard
    /// Leave the old snapshot in the vault untouched; the account starts without a profile.
    case keep
}

/// The hook that a ``ProfileStore`` calls at start when a snapshot was written with
/// another schema version, or no longer decodes as the current type.
///
/// It receives the stored JSON and the version it was written with. For example, after
/// version 2 split `name` into `givenName` and `familyName`:
///
/// ```swift
/// let migration: ProfileMigration<Profile> = { stored in
///     guard stored.schemaVersion == 1 else { return .discard }
///     let old = try JSONDecoder().decode(ProfileV1.self, from: stored.data)
///     return .migrate(Profile(migrating: old))
/// }
/// ```
///
/// A hook that throws is treated as ``ProfileMigrationDecision/keep``: nothing is lost.
public typealias ProfileMigration<Profile: Sendable> = @Sendable (StoredProfileSnapshot) throws -> ProfileMigrationDecision<Profile>
