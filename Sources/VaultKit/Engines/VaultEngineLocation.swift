/// Where a vault lives in a storage engine, read from its URL: what ``VaultEngine`` hands
/// the library and the tool, so that they reach the storage without knowing the engine.
///
/// `description` is what ``Vault/location`` and every error and prompt name: the URL without
/// any secret in it (a password), since messages reach terminals and logs.
package protocol VaultEngineLocation: Sendable, CustomStringConvertible {
    /// Whether the URL as given holds a secret (a password): the tool refuses such a URL,
    /// since its argv and environment are readable by others.
    var holdsSecret: Bool { get }

    /// A connected storage for this location, to open the vault in it or to create one.
    /// Creating fails with ``StorageError/alreadyExists(location:)`` where a vault is;
    /// opening with ``StorageError/notFound(location:)`` where none is.
    ///
    /// - Parameter busyTimeout: how long a write waits for another connection's write.
    func storage(busyTimeout: Duration) throws(VaultError) -> any VaultStorage
}
