/// Host key wraps: unlocking one vault on many hosts without sharing one secret
/// (docs/FORMAT.md section 12).
///
/// Each host has its own X25519 key pair (``HostKeyPair``); the vault keeps its master
/// key sealed to each host's public key, as sops recipients and Kubernetes KMS envelopes
/// do. Any unlocked handle can add a host; removing one re-keys the vault, so the
/// removed host's wrap opens nothing the vault still holds.
///
/// ```swift
/// // On host A, unlocked with the passphrase:
/// try vault.addHost(HostPublicKey(base64: hostBPublicKey), name: "web-2")
/// // On host B:
/// let vault = try Vault.open(at: path, hostKey: HostKeyPair(privateKeyFile: "/etc/app/host.key"))
/// ```
extension Vault {
    /// A host that can unlock the vault: its name and public key, nothing secret.
    public struct Host: Sendable, Hashable {
        public let name: String
        public let publicKey: HostPublicKey
        /// ``HostPublicKey/fingerprint`` of the public key.
        public var fingerprint: String { publicKey.fingerprint }
    }

    /// Opens an existing vault with this host's key pair.
    ///
    /// - Throws: ``VaultError/wrongPassphrase`` when the vault has no wrap for this host
    ///   (never added, or removed), ``VaultError/tampered(reason:)`` when the wrap holds a
    ///   master key the vault does not use, and the errors of ``open(at:passphrase:busyTimeout:)-8lax5``.
    public static func open(at path: String, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        try FileSystem.checkExistingVault(at: path)
        let database = try openDatabase(path, busyTimeout: busyTimeout)
        return try unlock(VaultStore(database), path: path, hostKey: hostKey)
    }

    /// Opens the vault in `storage` with a host key (other storage engines, the seam's tests).
    package static func open(_ storage: sending any VaultStorage, hostKey: HostKeyPair) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), path: storage.location, hostKey: hostKey)
    }

    private static func unlock(_ store: sending VaultStore, path: String, hostKey: HostKeyPair) throws(VaultError) -> Vault {
        let (header, masterKey) = try store.readTransaction { () throws(VaultError) in
            let header = try store.readHeader()
            try store.checkSchema(formatVersion: header.formatVersion)
            // Host wraps exist only from format 3 on, so nothing older is opened (or upgraded) here.
            guard header.formatVersion == VaultHeader.currentFormatVersion,
                  let wraps = try store.readHostWraps(),
                  let masterKey = HostWraps.open(wraps, with: hostKey)
            else { throw VaultError.wrongPassphrase }
            return (header, masterKey)
        }
        let keys = KeyHierarchy(masterKey: masterKey)
        guard keys.keyCheck == header.masterKeyCheck else {
            throw .tampered(reason: .hostWrapHoldsAnotherMasterKey)
        }
        var unlocked = UnlockedVault(store: store, keys: keys, keyEncryptionKey: nil, header: header)
        unlocked.hostKey = hostKey
        return Vault(path: path, unlocked: unlocked)
    }

    /// Lets the host holding `publicKey`'s private key unlock the vault, under `name`.
    ///
    /// O(hosts): one seal and a re-tagged manifest root, no item is rewritten.
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for a name or public key already
    ///   added, or an invalid name; ``VaultError/tampered(reason:)`` if the stored wraps
    ///   or header fail authentication.
    public func addHost(_ publicKey: HostPublicKey, name: String) throws(VaultError) {
        try HostWraps.validate(name: name)
        try withUnlocked { (vault) throws(VaultError) in
            try vault.rollbackGuard?.ensureRecordable()
            vault.manifestCheck.committing = nil
            let header = try vault.store.writeTransaction { () throws(VaultError) -> VaultHeader in
                try vault.refreshKeysIfRekeyed()
                // The wraps built on must be the authenticated ones.
                let (_, generation, root) = try vault.verifiedState()
                var wraps = try vault.store.readHostWraps() ?? []
                if wraps.contains(where: { $0.name.utf8.elementsEqual(name.utf8) }) {
                    throw .invalidArgument(.hostNameTaken)
                }
                if wraps.contains(where: { $0.publicKey == publicKey.bytes }) {
                    throw .invalidArgument(.hostKeyAlreadyAdded)
                }
                wraps.append(StoredHostWrap(name: name, publicKey: publicKey.bytes, sealedMasterKey: HostWraps.seal(vault.keys.masterKey, to: publicKey)))
                try vault.store.replaceHostWraps(wraps)
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
                for wrap in HostWraps.sorted(try vault.store.readHostWraps() ?? []) {
                    hosts.append(Host(name: wrap.name, publicKey: try HostWraps.publicKey(of: wrap)))
                }
                return hosts
            }
        }
    }
}

// MARK: Async twins (see Vault+Async.swift)

extension Vault {
    public static func open(at path: String, hostKey: HostKeyPair, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await VaultQueues.run(on: VaultQueues.opening()) { () throws(VaultError) in try open(at: path, hostKey: hostKey, busyTimeout: busyTimeout) }
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
