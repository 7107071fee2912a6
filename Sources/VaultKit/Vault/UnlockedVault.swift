/// An open vault storage together with the keys that unlock it: the state behind a
/// ``Vault``'s mutex. All item logic lives in its extensions, one concern a file
/// (`UnlockedVault+Concern.swift`), so ``Vault`` and ``VaultBatch`` share it.
struct UnlockedVault {
    let store: VaultStore
    var keys: KeyHierarchy
    /// Kept (locked in memory) so a re-key by another process can be followed and
    /// ``Vault/rekey()`` needs no passphrase; `nil` when a host key unlocked the vault.
    var keyEncryptionKey: SecureBuffer?
    /// The passphrase this handle was opened with (or last set), locked in memory, so a
    /// change of the wrapping by another process (a new salt or cost for the same
    /// passphrase, as `vault passwd` makes) can be followed; `nil` for a raw key or host key.
    var passphrase: SecretBytes? = nil
    /// The host key that unlocked the vault, if one did: it follows a re-key through
    /// this host's wrap instead of the header's.
    var hostKey: HostKeyPair? = nil
    /// The vault identities the host key's handle accepts the wraps of (what the host pinned).
    var hostPins: [VaultIdentity] = []
    var header: VaultHeader
    /// What this process has verified of the manifest (see `Manifest.swift`).
    let manifestCheck = ManifestCheck()
    /// The manifest changes of the write transaction in progress.
    let manifestChanges = ManifestChanges()
    /// The `set`s of the write transaction in progress gathered for one insert call.
    let pendingInserts = PendingInserts()
    /// Where each commit's generation is recorded, once the vault uses a rollback guard.
    var rollbackGuard: RollbackGuardFile?
    /// The writer recorded in every record this handle writes (``Vault/writer``).
    var writer: String = VaultWriter.defaultName
    /// Whether ``writer`` is the host name of the host key that unlocked the vault, which
    /// a declared name does not replace.
    var writerIsHostName = false
}
