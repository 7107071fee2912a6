#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Creating a vault: a new file, or a new vault in any storage (an engine's).
extension Vault {
    /// Creates a vault protected by a passphrase.
    ///
    /// Missing parent directories are created with mode 0700; the file is created
    /// with mode 0600, completely or not at all.
    ///
    /// - Parameters:
    ///   - path: where the vault file goes; nothing may exist there yet.
    ///   - passphrase: its UTF-8 bytes are the Argon2id input, without normalisation.
    ///   - kdf: Argon2id cost, recorded in the file.
    ///   - busyTimeout: how long to wait for another process's write lock.
    /// - Throws: ``VaultError/vaultAlreadyExists(path:)``, ``VaultError/io(path:errno:)``, ``VaultError/keyDerivationFailed``.
    public static func create(at path: String, passphrase: String, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try create(at: path, passphrase: SecretBytes(passphrase), kdf: kdf, busyTimeout: busyTimeout)
    }

    /// Creates a vault protected by a passphrase held in protected memory.
    public static func create(at path: String, passphrase: SecretBytes, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        let salt = Sodium.randomBytes(count: PassphraseKDF.saltByteCount)
        try FileSystem.createParentDirectories(of: path)
        try FileSystem.checkDirectory(of: path)
        try refuseExisting(path)
        #if DEBUG
        BlockingWorkProbe.note(path)
        #endif
        let keyEncryptionKey = try PassphraseKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: kdf)
        return try create(at: path, keySource: .passphrase(salt: salt, parameters: kdf), keyEncryptionKey: keyEncryptionKey, passphrase: passphrase, busyTimeout: busyTimeout)
    }

    /// Creates a vault unlocked by a raw 32-byte key, with no key derivation.
    ///
    /// - Throws: ``VaultError/vaultAlreadyExists(path:)``, ``VaultError/io(path:errno:)``.
    public static func create(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        try FileSystem.createParentDirectories(of: path)
        try FileSystem.checkDirectory(of: path)
        let keyEncryptionKey = key.withUnsafeBytes { SecureBuffer(copying: $0, lockInMemory: true) }
        return try create(at: path, keySource: .rawKey, keyEncryptionKey: keyEncryptionKey, passphrase: nil, busyTimeout: busyTimeout)
    }

    /// Fails early, before a slow key derivation, when the path is taken; the final
    /// `link(2)` still guards against a file appearing meanwhile.
    private static func refuseExisting(_ path: String) throws(VaultError) {
        if FileManager.default.fileExists(atPath: path) { throw .vaultAlreadyExists(path: path) }
    }

    private static func create(at path: String, keySource: VaultHeader.KeySource, keyEncryptionKey: SecureBuffer, passphrase: SecretBytes?, busyTimeout: Duration) throws(VaultError) -> Vault {
        try refuseExisting(path)
        let (keys, header) = newKeys(keySource: keySource, keyEncryptionKey: keyEncryptionKey)
        let temporary = try FileSystem.createTemporaryFile(besides: path)
        do {
            try VaultStore.converting { () throws(StorageError) in
                try VaultDatabase.initialize(fileAt: temporary, header: header, manifestTag: keys.manifestRootTag(.zero, header: header, generation: 0))
            }
            try FileSystem.publish(temporary, at: path)
        } catch {
            FileSystem.removeDatabaseFiles(temporary)
            throw error
        }
        let database = try openDatabase(path, busyTimeout: busyTimeout)
        return Vault(location: .file(path: path), unlocked: UnlockedVault(store: VaultStore(database), keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
    }

    /// A new random master key, and the header that wraps it under `keyEncryptionKey`.
    private static func newKeys(keySource: VaultHeader.KeySource, keyEncryptionKey: SecureBuffer) -> (KeyHierarchy, VaultHeader) {
        let masterKey = KeyHierarchy.randomMasterKey()
        let keys = KeyHierarchy(masterKey: masterKey)
        let (nonce, wrapped) = UnlockedVault.wrap(masterKey: masterKey, with: keyEncryptionKey)
        let header = VaultHeader(
            formatVersion: VaultHeader.currentFormatVersion,
            vaultID: Sodium.randomBytes(count: VaultHeader.vaultIDByteCount),
            keySource: keySource,
            masterKeyNonce: nonce, wrappedMasterKey: wrapped, masterKeyCheck: keys.keyCheck
        )
        return (keys, header)
    }

    /// Creates a vault unlocked by a raw key in empty `storage`, any ``VaultStorage``:
    /// the seam's conformance tests run the engine this way on storages of their own.
    /// Storage engines in other modules (VaultKitPostgres) build their public calls on it.
    package static func create(in storage: sending any VaultStorage, key: VaultKey) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        let keyEncryptionKey = key.withUnsafeBytes { SecureBuffer(copying: $0, lockInMemory: true) }
        return try create(in: storage, keySource: .rawKey, keyEncryptionKey: keyEncryptionKey, passphrase: nil)
    }

    /// Creates a vault protected by a passphrase in empty `storage` (see ``create(in:key:)``).
    package static func create(in storage: sending any VaultStorage, passphrase: SecretBytes, kdf: KDFParameters) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        let salt = Sodium.randomBytes(count: PassphraseKDF.saltByteCount)
        let keyEncryptionKey = try PassphraseKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: kdf)
        return try create(in: storage, keySource: .passphrase(salt: salt, parameters: kdf), keyEncryptionKey: keyEncryptionKey, passphrase: passphrase)
    }

    private static func create(in storage: sending any VaultStorage, keySource: VaultHeader.KeySource, keyEncryptionKey: SecureBuffer, passphrase: SecretBytes?) throws(VaultError) -> Vault {
        let (keys, header) = newKeys(keySource: keySource, keyEncryptionKey: keyEncryptionKey)
        try VaultStore.converting { () throws(StorageError) in
            try storage.createVault(header: header, manifestTag: keys.manifestRootTag(.zero, header: header, generation: 0))
        }
        return Vault(location: storage.vaultLocation, unlocked: UnlockedVault(store: VaultStore(storage), keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
    }
}
