#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Opening an existing vault, in a file or in any storage, and unlocking it.
extension Vault {
    /// Opens an existing vault with its passphrase.
    ///
    /// Opening checks the header and the schema, whatever the vault's size: each read
    /// checks what it touches (see ``verify()-1pdra``). A vault of format 2 is verified whole
    /// and upgraded to format 4 in place, once, in one transaction, and so is a vault of
    /// format 3 unless it can only be read (it is then read as it is). A vault of format 1,
    /// which has no manifest to verify, is refused with ``VaultError/formatUpgradeRequired(version:)``:
    /// see ``upgrade(at:passphrase:busyTimeout:)-280ty``.
    ///
    /// - Throws: ``VaultError/vaultNotFound(path:)``, ``VaultError/notAVault(path:)``,
    ///   ``VaultError/wrongPassphrase``, ``VaultError/unsupportedFormatVersion(_:)``,
    ///   ``VaultError/formatUpgradeRequired(version:)``, ``VaultError/tampered(reason:)``,
    ///   ``VaultError/corrupted(reason:)``, ``VaultError/insecurePermissions(path:mode:)``,
    ///   ``VaultError/io(path:errno:)``.
    public static func open(at path: String, passphrase: String, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, passphrase: SecretBytes(passphrase), busyTimeout: busyTimeout)
    }

    /// Opens an existing vault with its passphrase held in protected memory.
    public static func open(at path: String, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: false, passphrase: passphrase)
    }

    /// Opens an existing vault with its raw key.
    public static func open(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: false, key: key)
    }

    /// Opens a vault of any format this version reads, upgrading a format-1 vault too.
    ///
    /// Format 1 predates the manifest, so nothing can tell whether its rows are the ones
    /// last written: upgrading *accepts* them as the baseline from then on. Call it only
    /// for a file you have kept yourself, never for one whose history you do not know
    /// (someone who can write the file could have turned a newer vault into a format-1
    /// one; VaultKit refuses such a downgrade of a format-3 vault by itself). For any
    /// other format it is the same as ``open(at:passphrase:busyTimeout:)-8lax5``.
    public static func upgrade(at path: String, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: true, passphrase: passphrase)
    }

    /// ``upgrade(at:passphrase:busyTimeout:)-280ty`` for a vault unlocked by a raw key.
    public static func upgrade(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: true, key: key)
    }

    private static func open(at path: String, busyTimeout: Duration, upgradingFormatOne: Bool, passphrase: SecretBytes) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: upgradingFormatOne, passphrase: passphrase, keyEncryptionKey: passphraseUnlocking(passphrase, noting: path))
    }

    /// The key-encryption key of a vault unlocked by `passphrase`, refusing a raw-key vault.
    private static func passphraseUnlocking(_ passphrase: SecretBytes, noting path: String) -> (VaultHeader) throws(VaultError) -> SecureBuffer {
        { (header) throws(VaultError) in
            guard case .passphrase(let salt, let parameters) = header.keySource else {
                throw .invalidArgument(.keyGivenForPassphraseVault)
            }
            #if DEBUG
            BlockingWorkProbe.note(path)
            #endif
            return try PassphraseKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: parameters)
        }
    }

    private static func open(at path: String, busyTimeout: Duration, upgradingFormatOne: Bool, key: VaultKey) throws(VaultError) -> Vault {
        try open(at: path, busyTimeout: busyTimeout, upgradingFormatOne: upgradingFormatOne, passphrase: nil, keyEncryptionKey: rawKeyUnlocking(key))
    }

    /// The key-encryption key of a vault unlocked by `key`, refusing a passphrase vault.
    private static func rawKeyUnlocking(_ key: VaultKey) -> (VaultHeader) throws(VaultError) -> SecureBuffer {
        { (header) throws(VaultError) in
            guard header.keySource == .rawKey else {
                throw .invalidArgument(.passphraseGivenForKeyVault)
            }
            return key.withUnsafeBytes { SecureBuffer(copying: $0, lockInMemory: true) }
        }
    }

    private static func open(
        at path: String, busyTimeout: Duration, upgradingFormatOne: Bool, passphrase: SecretBytes?,
        keyEncryptionKey derive: (VaultHeader) throws(VaultError) -> SecureBuffer
    ) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        try FileSystem.checkExistingVault(at: path)
        let database = try openDatabase(path, busyTimeout: busyTimeout)
        return try unlock(VaultStore(database), location: .file(path: path), upgradingFormatOne: upgradingFormatOne, passphrase: passphrase, keyEncryptionKey: derive)
    }

    /// Checks the header and schema of an opened storage, unwraps the master key, and
    /// upgrades an older format: what opening does on any ``VaultStorage``.
    private static func unlock(
        _ store: sending VaultStore, location: Location, upgradingFormatOne: Bool, passphrase: SecretBytes?,
        keyEncryptionKey derive: (VaultHeader) throws(VaultError) -> SecureBuffer
    ) throws(VaultError) -> Vault {
        var header = try store.readHeader()
        try store.checkSchema(formatVersion: header.formatVersion)
        if header.formatVersion == 1 && !upgradingFormatOne { throw .formatUpgradeRequired(version: 1) }
        let keyEncryptionKey = try derive(header)
        guard let masterKey = UnlockedVault.unwrapMasterKey(header, with: keyEncryptionKey) else {
            // A newer file relabelled as an older format unwraps only under the newer rules.
            if header.formatVersion < VaultHeader.boundWrappingFormatVersion,
               UnlockedVault.unwrapMasterKey(header, with: keyEncryptionKey, asFormat: VaultHeader.currentFormatVersion) != nil {
                throw .tampered(reason: .formatDowngraded)
            }
            throw .wrongPassphrase
        }
        let keys = KeyHierarchy(masterKey: masterKey)
        guard keys.keyCheck == header.masterKeyCheck else {
            throw .tampered(reason: .keyCheckMismatch)
        }
        if FormatUpgrade.isDue(header, in: store) {
            header = try FormatUpgrade.run(store, keys: keys, keyEncryptionKey: keyEncryptionKey, upgradingFormatOne: upgradingFormatOne)
        }
        return Vault(location: location, unlocked: UnlockedVault(store: store, keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
    }

    /// Opens the vault in `storage` with its raw key (see ``create(in:key:)``).
    package static func open(_ storage: sending any VaultStorage, key: VaultKey) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), location: storage.vaultLocation, upgradingFormatOne: false, passphrase: nil, keyEncryptionKey: rawKeyUnlocking(key))
    }

    /// Opens the vault in `storage` with its passphrase (see ``create(in:key:)``).
    package static func open(_ storage: sending any VaultStorage, passphrase: SecretBytes) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), location: storage.vaultLocation, upgradingFormatOne: false, passphrase: passphrase, keyEncryptionKey: passphraseUnlocking(passphrase, noting: storage.location))
    }

    static func openDatabase(_ path: String, busyTimeout: Duration) throws(VaultError) -> VaultDatabase {
        try VaultStore.converting { () throws(StorageError) in
            try VaultDatabase.openExisting(path, busyTimeoutMilliseconds: Int32(clamping: max(0, busyTimeout.clampedMilliseconds)))
        }
    }
}
