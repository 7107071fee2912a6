#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Changing what unlocks a vault (passphrase, raw key) and its master key.
extension Vault {
    /// The Argon2id cost recorded for the current passphrase, or `nil` when a raw key
    /// unlocks the vault. Pass it to ``changePassphrase(to:kdf:)-9rpt6`` to keep the cost.
    public var kdfParameters: KDFParameters? {
        get throws(VaultError) {
            try withUnlocked { (vault) throws(VaultError) in
                if case .passphrase(_, let parameters) = vault.header.keySource { return parameters }
                return nil
            }
        }
    }

    /// Changes the passphrase (or switches a key-unlocked vault to a passphrase).
    ///
    /// Only the master key is re-wrapped: this costs one key derivation whatever the
    /// vault's size, and no item is rewritten. To replace the master key as well, as
    /// after a leaked passphrase, use ``rekey(changingPassphraseTo:kdf:)-22ork``.
    public func changePassphrase(to passphrase: String, kdf: KDFParameters = .moderate) throws(VaultError) {
        try changePassphrase(to: SecretBytes(passphrase), kdf: kdf)
    }

    /// Changes the passphrase, given in protected memory.
    public func changePassphrase(to passphrase: SecretBytes, kdf: KDFParameters = .moderate) throws(VaultError) {
        let wrapping = try UnlockedVault.NewWrapping(passphrase: passphrase, kdf: kdf, noting: location.description)
        try withUnlocked { (vault) throws(VaultError) in try vault.rewrap(wrapping) }
    }

    /// Makes a raw key, instead of a passphrase, unlock the vault. O(1), like ``changePassphrase(to:kdf:)-9rpt6``.
    public func changeKey(to key: VaultKey) throws(VaultError) {
        let wrapping = UnlockedVault.NewWrapping(key: key)
        try withUnlocked { (vault) throws(VaultError) in try vault.rewrap(wrapping) }
    }

    /// Replaces the master key with a new random one and re-seals every item under it,
    /// in one transaction: after a crash the vault holds either all old or all new.
    ///
    /// Use it when a master key may have leaked (for example from a memory dump). The
    /// passphrase or key stays the same. Other processes that have the vault open
    /// follow the change on their next call.
    public func rekey() throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in try vault.rekey(removingHost: nil, wrapping: nil) }
    }

    /// Replaces the master key and the passphrase together, in one transaction: what to
    /// do after a passphrase leaked (`vault passwd` does it).
    ///
    /// ``changePassphrase(to:kdf:)-9rpt6`` followed by ``rekey()-8484f`` is two commits: a failure
    /// between them (a full disk during the re-key) would leave a vault that only the new
    /// passphrase opens while the caller is told the change failed. Here a failure leaves
    /// the old passphrase and master key in force, and success leaves only the new ones.
    /// Other processes that opened the vault with the same new passphrase follow the
    /// change; the others get ``VaultError/keyChanged``.
    ///
    /// - Throws: ``VaultError/keyDerivationFailed``, the errors of ``rekey()-8484f``.
    public func rekey(changingPassphraseTo passphrase: SecretBytes, kdf: KDFParameters = .moderate) throws(VaultError) {
        let wrapping = try UnlockedVault.NewWrapping(passphrase: passphrase, kdf: kdf, noting: location.description)
        try withUnlocked { (vault) throws(VaultError) in try vault.rekey(removingHost: nil, wrapping: wrapping) }
    }

    /// ``rekey()-8484f``, also dropping the host key wrap named `removedHost` (``removeHost(_:)``):
    /// every remaining wrap, the header's and each other host's, is rewritten to the new
    /// master key, so the removed host's wrap opens nothing the vault still holds.
    func rekey(removingHost removedHost: String) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in try vault.rekey(removingHost: removedHost, wrapping: nil) }
    }
}
