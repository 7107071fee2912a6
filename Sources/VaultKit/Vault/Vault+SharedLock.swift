extension Vault {
    /// The lock named `name` shared by every host that opens this vault, or `nil` for a
    /// vault that lives on one host (a file). For VaultAuth's single-flight refresh.
    ///
    /// - Throws: ``VaultError/closed``.
    package func sharedLock(named name: String) throws(VaultError) -> (any SharedLock)? {
        try withUnlocked { (vault) throws(VaultError) in vault.store.storage.sharedLock(named: name) }
    }
}
