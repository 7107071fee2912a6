/// A value that differs after every write to a vault, by any process: compare two to
/// learn, cheaply, whether a vault's contents may have changed since the first was read.
///
/// It is the vault's manifest root and its tag (docs/FORMAT.md, "Manifest"), which
/// every committed item write (each seals with a new random nonce) and every re-key
/// replaces in the same transaction. Reading it is one query of the header row: no item is decrypted, so
/// it suits polling. Opaque on purpose: it says nothing about the items.
public struct VaultChangeToken: Sendable, Hashable {
    let root: [UInt8]?
    let tag: [UInt8]?
}

extension Vault {
    /// The vault's current ``VaultChangeToken``.
    ///
    /// - Throws: ``VaultError/closed``, ``VaultError/busy(path:)``, ``VaultError/io(path:errno:)``.
    public func changeToken() throws(VaultError) -> VaultChangeToken {
        try withUnlocked { (vault) throws(VaultError) in
            let (root, tag) = try vault.store.readManifestRoot()
            return VaultChangeToken(root: root, tag: tag)
        }
    }
}
