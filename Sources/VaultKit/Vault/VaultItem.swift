#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The attributes of one generic-password item, without its secret.
///
/// An item is identified by ``service`` and ``account`` together, like the Keychain's
/// `kSecAttrService` and `kSecAttrAccount`. ``generic`` is free-form data stored with
/// it (`kSecAttrGeneric`), ``label`` a name for people (`kSecAttrLabel`).
public struct VaultItem: Sendable, Hashable, Codable {
    /// What the secret is for, for example `"api.example.com"`.
    public var service: String
    /// Whose secret it is within the service, for example `"alice"`.
    public var account: String
    /// A human-readable name, if one was given.
    public var label: String?
    /// Application data stored with the item, encrypted like everything else.
    public var generic: Data?
    /// When the item was first added.
    public var created: Date
    /// When the item was last written.
    public var modified: Date

    public init(service: String, account: String, label: String? = nil, generic: Data? = nil, created: Date, modified: Date) {
        self.service = service
        self.account = account
        self.label = label
        self.generic = generic
        self.created = created
        self.modified = modified
    }
}
