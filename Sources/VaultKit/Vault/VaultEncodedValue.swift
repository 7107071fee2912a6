#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value stored by ``Vault/setValue(_:schemaVersion:service:account:label:generic:)-5v2hy``,
/// not yet decoded: the schema version it was written with and its JSON.
///
/// Decode it with ``decode(_:)``, or hand ``json`` to a migration when ``schemaVersion``
/// says it was written by an older version of your type:
///
/// ```swift
/// let stored = try entry.encodedValue()
/// let profile = stored.schemaVersion == 1
///     ? Profile(migrating: try stored.decode(ProfileV1.self))
///     : try stored.decode(Profile.self)
/// ```
///
/// Its `description` never shows the JSON (``SecretBytes`` shows itself as redacted).
public struct VaultEncodedValue: Sendable {
    /// The schema version given when the value was written; 0 when none was given.
    public let schemaVersion: Int
    /// The value's JSON (UTF-8), in memory that is zeroed when released.
    public let json: SecretBytes

    /// A value already encoded as JSON, to store with
    /// ``Vault/setValue(_:service:account:label:generic:)-3izie``: for
    /// code that encodes values itself, or copies them between vaults. `json` is stored
    /// as given; decoding it later fails with ``VaultError/valueNotDecodable`` if it is
    /// not JSON of the type asked for.
    public init(schemaVersion: Int, json: SecretBytes) {
        self.schemaVersion = schemaVersion
        self.json = json
    }

    /// Decodes the JSON as `type`, with the date and data strategies the value was written with.
    ///
    /// - Throws: ``VaultError/valueNotDecodable``.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws(VaultError) -> Value {
        try VaultValueEncoding.decode(type, json: json)
    }
}
