/// Host key wraps: unlocking one vault on many hosts without sharing one secret
/// (docs/FORMAT.md section 12).
///
/// Each host has its own X25519 key pair (``HostKeyPair``); the vault keeps its master
/// key sealed to each host's public key, as sops recipients and Kubernetes KMS envelopes
/// do. A passphrase or key holder adds a host; removing one re-keys the vault, so the
/// removed host's wrap opens nothing the vault still holds.
///
/// Since a host's public key is public, anyone who can write the vault's storage could
/// seal a master key of their own to it. So the wraps are signed by the vault's
/// ``VaultIdentity``, whose secret half only passphrase or key holders can use, and a
/// host opens only a vault signed by the identity it pinned when it was enrolled:
///
/// ```swift
/// // On host A, unlocked with the passphrase:
/// try vault.addHost(HostPublicKey(base64: hostBPublicKey), name: "web-2")
/// let identity = try vault.identity()    // hand identity.fingerprint to host B
/// // On host B, with the fingerprint host A handed over:
/// let vault = try Vault.open(
///     at: path, hostKey: HostKeyPair(privateKeyFile: "/etc/app/host.key"),
///     identity: VaultIdentity(fingerprint: "vkid1:...")
/// )
/// ```
extension Vault {
    /// A host that can unlock the vault: its name and public key, nothing secret.
    public struct Host: Sendable, Hashable {
        public let name: String
        public let publicKey: HostPublicKey
        /// ``HostPublicKey/fingerprint`` of the public key.
        public var fingerprint: String { publicKey.fingerprint }
    }

    /// Replaced by `open(at:hostKey:identity:busyTimeout:)`: a host key alone cannot tell
    /// the vault it was enrolled in from one an attacker built for its public key.
    @available(*, unavailable, renamed: "open(at:hostKey:identity:busyTimeout:)", message: "pin the vault's identity (Vault.identity(), 'vault host identity')")
    public static func open(at path: String, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        throw .tampered(reason: .vaultIdentityNotPinned)
    }

    /// Opens an existing vault with this host's key pair, if its host wraps are signed by
    /// `identity`, the vault identity this host pinned when it was enrolled.
    ///
    /// - Throws: ``VaultError/tampered(reason:)`` when the wraps are not signed by
    ///   `identity` (``VaultError/Reason/vaultIdentityNotPinned``,
    ///   ``VaultError/Reason/hostWrapsSignatureInvalid``), are signed by no identity
    ///   (``VaultError/Reason/vaultIdentityMissing``: a vault from before identities until a
    ///   passphrase or key holder calls `identity()`), or hold a master key the vault
    ///   does not use; ``VaultError/wrongPassphrase`` when the vault has no wrap for this
    ///   host (never added, or removed); and the errors of ``open(at:passphrase:busyTimeout:)-8lax5``.
    public static func open(at path: String, hostKey: HostKeyPair, identity: VaultIdentity, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, hostKey: hostKey, identities: [identity], busyTimeout: busyTimeout)
    }

    /// Opens with a host key whose wraps may be signed by any of `identities`: a host
    /// enrolled in several vaults (the CLI's pin file).
    package static func open(at path: String, hostKey: HostKeyPair, identities: [VaultIdentity], busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        try FileSystem.checkExistingVault(at: path)
        let database = try openDatabase(path, busyTimeout: busyTimeout)
        return try unlock(VaultStore(database), location: .file(path: path), hostKey: hostKey, identities: identities)
    }

    /// Opens the vault in `storage` with a host key (other storage engines, the seam's tests).
    package static func open(_ storage: sending any VaultStorage, hostKey: HostKeyPair, identities: [VaultIdentity]) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), location: storage.vaultLocation, hostKey: hostKey, identities: identities)
    }

    private static func unlock(_ store: sending VaultStore, location: Location, hostKey: HostKeyPair, identities: [VaultIdentity]) throws(VaultError) -> Vault {
        var (header, masterKey) = try store.readTransaction { () throws(VaultError) in
            let header = try store.readHeader()
            try store.checkSchema(formatVersion: header.formatVersion)
            // Host wraps exist only from format 3 on, so nothing older is opened (or upgraded
            // from before 3) here.
            guard header.formatVersion >= VaultHeader.boundWrappingFormatVersion, let wraps = try store.readHostWraps() else {
                throw VaultError.wrongPassphrase
            }
            let hosts = try HostWraps.verifiedHosts(wraps, vaultID: header.vaultID, pinned: identities)
            guard let masterKey = HostWraps.open(hosts, with: hostKey) else { throw VaultError.wrongPassphrase }
            // The name the vault identity signed for this host's wrap: the writer it records.
            let name = hosts.first { $0.publicKey == hostKey.publicKey.bytes }?.name ?? ""
            return (header, (masterKey, name))
        }
        let keys = KeyHierarchy(masterKey: masterKey.0)
        guard keys.keyCheck == header.masterKeyCheck else {
            throw .tampered(reason: .hostWrapHoldsAnotherMasterKey)
        }
        if FormatUpgrade.isDue(header, in: store) {
            // Format 3 to 4 re-wraps nothing, so a host key can upgrade the vault.
            header = try FormatUpgrade.run(store, keys: keys, keyEncryptionKey: nil, upgradingFormatOne: false)
        }
        var unlocked = UnlockedVault(store: store, keys: keys, keyEncryptionKey: nil, header: header)
        unlocked.hostKey = hostKey
        unlocked.hostPins = identities
        if let name = try? VaultWriter.validated(masterKey.1) {
            unlocked.writer = name
            unlocked.writerIsHostName = true
        }
        return Vault(location: location, unlocked: unlocked)
    }

    /// The vault's identity, which a host pins to open it by host key: created (and the
    /// current host wraps signed by it) when the vault has none yet.
    ///
    /// A vault whose hosts were added before identities existed needs this once, from a
    /// passphrase or key holder, before its hosts can open it; each host then pins the
    /// fingerprint (``VaultIdentity/fingerprint``).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` (``VaultError/Reason/hostChangeNeedsPassphraseOrKey``)
    ///   when the vault has none and this handle was opened with a host key;
    ///   ``VaultError/tampered(reason:)`` when the stored identity does not open with this
    ///   handle's passphrase or key, or the wraps or header fail authentication.
    public func identity() throws(VaultError) -> VaultIdentity {
        let existing = try withUnlocked { (vault) throws(VaultError) -> VaultIdentity? in
            try vault.refreshKeysIfRekeyed()
            return try vault.store.readTransaction { () throws(VaultError) -> VaultIdentity? in
                let vaultID = try vault.verifiedState().vaultID
                guard let wraps = try vault.store.readHostWraps() else { return nil }
                let (hosts, identityRow) = HostWraps.split(wraps)
                guard let identityRow else { return nil }
                let record = try IdentityRecord(row: identityRow)
                if let keyEncryptionKey = vault.keyEncryptionKey {
                    _ = try vault.identitySeed(record, keyEncryptionKey: keyEncryptionKey)
                } else if !vault.hostPins.contains(record.identity) {
                    throw .tampered(reason: .vaultIdentityNotPinned)
                }
                guard record.signs(hosts: hosts, vaultID: vaultID) else { throw .tampered(reason: .hostWrapsSignatureInvalid) }
                return record.identity
            }
        }
        if let existing { return existing }
        try changeHostWraps { (hosts, _) throws(VaultError) in hosts }
        return try identity()
    }

    /// Lets the host holding `publicKey`'s private key unlock the vault, under `name`.
    ///
    /// O(hosts): one seal and a re-tagged manifest root, no item is rewritten.
    ///
    /// Needs the passphrase or key: the wraps are signed by the vault's identity
    /// (`identity()`, created here if the vault has none).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for a name or public key already
    ///   added, or an invalid name, or a handle opened with a host key
    ///   (``VaultError/Reason/hostChangeNeedsPassphraseOrKey``); ``VaultError/tampered(reason:)``
    ///   if the stored wraps, identity or header fail authentication.
    public func addHost(_ publicKey: HostPublicKey, name: String) throws(VaultError) {
        try HostWraps.validate(name: name)
        try changeHostWraps { (hosts, masterKey) throws(VaultError) in
            if hosts.contains(where: { $0.name.utf8.elementsEqual(name.utf8) }) {
                throw .invalidArgument(.hostNameTaken)
            }
            if hosts.contains(where: { $0.publicKey == publicKey.bytes }) {
                throw .invalidArgument(.hostKeyAlreadyAdded)
            }
            return hosts + [StoredHostWrap(name: name, publicKey: publicKey.bytes, sealedMasterKey: try HostWraps.seal(masterKey, to: publicKey))]
        }
    }

    /// Replaces the host rows with what `change` makes of the current (authenticated)
    /// ones, signed by the vault's identity (created if the vault has none), and re-tags
    /// the manifest root for them, in one transaction. O(hosts): no item is rewritten.
    private func changeHostWraps(_ change: ([StoredHostWrap], SecureBuffer) throws(VaultError) -> [StoredHostWrap]) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in
            // Only a passphrase or key holder can sign: refused before anything is read.
            guard vault.keyEncryptionKey != nil else { throw .invalidArgument(.hostChangeNeedsPassphraseOrKey) }
            try vault.rollbackGuard?.ensureRecordable()
            vault.manifestCheck.committing = nil
            let header = try vault.store.writeTransaction { () throws(VaultError) -> VaultHeader in
                try vault.refreshKeysIfRekeyed()
                // The wraps built on must be the authenticated ones.
                let (vaultID, generation, root) = try vault.verifiedState()
                let (hosts, identityRow) = HostWraps.split(try vault.store.readHostWraps() ?? [])
                let changed = try change(hosts, vault.keys.masterKey)
                try vault.store.replaceHostWraps(try vault.signedHostWraps(changed, identityRow: identityRow, vaultID: vaultID))
                let header = try vault.store.readHeader()
                try vault.store.writeManifestRoot(root, tag: vault.keys.manifestRootTag(root, header: header, generation: generation + 1), generation: generation + 1)
                vault.manifestCheck.committing = (generation + 1, root)
                return header
            }
            vault.header = header
            vault.recordCommit()
        }
    }

    /// Removes the host named `name` and re-keys the vault (``rekey()-8484f``): a new master
    /// key, every item re-sealed, the passphrase or key wrap and every other host's wrap
    /// rewritten, in one transaction.
    ///
    /// A removed host that kept a copy of the old master key can still read ciphertext it
    /// copied before, but nothing written from now on.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` when there is no such host, or when
    ///   this handle was opened with a host key (a host key cannot rewrap the passphrase
    ///   or key); the errors of ``rekey()-8484f``.
    public func removeHost(_ name: String) throws(VaultError) {
        try rekey(removingHost: name)
    }

    /// The hosts that can unlock the vault, in name byte order, after checking that the
    /// stored wraps are the authenticated ones.
    public func hosts() throws(VaultError) -> [Host] {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.refreshKeysIfRekeyed()
            return try vault.store.readTransaction { () throws(VaultError) in
                _ = try vault.verifiedState()
                var hosts: [Host] = []
                for wrap in HostWraps.sorted(HostWraps.split(try vault.store.readHostWraps() ?? []).hosts) {
                    hosts.append(Host(name: wrap.name, publicKey: try HostWraps.publicKey(of: wrap)))
                }
                return hosts
            }
        }
    }
}

// MARK: Async twins (see Vault+Async.swift)

extension Vault {
    public static func open(at path: String, hostKey: HostKeyPair, identity: VaultIdentity, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(at: path, hostKey: hostKey, identity: identity, busyTimeout: busyTimeout) }
    }

    @available(*, unavailable, renamed: "open(at:hostKey:identity:busyTimeout:)", message: "pin the vault's identity (Vault.identity(), 'vault host identity')")
    public static func open(at path: String, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        throw .tampered(reason: .vaultIdentityNotPinned)
    }

    public func identity() async throws(VaultError) -> VaultIdentity {
        try await offPool { () throws(VaultError) in try self.identity() }
    }

    public func addHost(_ publicKey: HostPublicKey, name: String) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.addHost(publicKey, name: name) }
    }

    public func removeHost(_ name: String) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.removeHost(name) }
    }

    public func hosts() async throws(VaultError) -> [Host] {
        try await offPool { () throws(VaultError) in try self.hosts() }
    }
}
