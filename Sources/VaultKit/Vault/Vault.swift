#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization

/// An encrypted vault of generic-password items in one file, like a Keychain you carry.
///
/// Items are identified by a service and an account and hold a secret plus optional
/// attributes (see ``VaultItem``). Everything about an item is sealed with
/// XSalsa20-Poly1305 under a random master key, which is itself wrapped under a key
/// derived from your passphrase with Argon2id, or under a raw 32-byte ``VaultKey``.
///
/// For example:
///
/// ```swift
/// let vault = try Vault.create(at: "/home/alice/.local/share/app/app.vault", passphrase: "correct horse")
/// try vault.set("s3cr3t", service: "api.example.com", account: "alice")
/// let token = try vault.string(service: "api.example.com", account: "alice")   // "s3cr3t"
/// ```
///
/// A `Vault` is `Sendable`: share one instance between tasks and threads. Several
/// processes may open the same file at once; a writer waits for another writer's
/// lock up to the busy timeout. Every write is durable when the call returns.
public final class Vault: Sendable {
    /// The vault file's path.
    public let path: String

    /// `nil` once closed. One connection per `Vault`, serialised by the mutex: SQLite
    /// point queries take microseconds, so a pool would add nothing but contention.
    private let state: Mutex<UnlockedVault?>
    /// A task executor on this vault's own serial queue, where its async calls run their
    /// blocking work: the vault's `async` calls made by a task running there do their
    /// work inline instead of hopping to the queue and back. See ``VaultExecutor``.
    public let executor = VaultExecutor()
    /// The thread inside ``withUnlocked(_:)`` (0 for none), so a call made from inside a
    /// ``batch(_:)`` closure fails fast with ``VaultError/reentrantCall`` instead of
    /// waiting forever for the lock its own thread holds.
    private let lockOwner = Atomic<UInt>(0)
    /// ``close()`` was called from inside a batch closure: close when the batch ends.
    private let closeWhenUnlocked = Atomic<Bool>(false)

    init(path: String, unlocked: consuming sending UnlockedVault) {
        self.path = path
        self.state = Mutex(unlocked)
    }

    /// How long a call waits for another process's write lock before ``VaultError/busy(path:)``.
    public static let defaultBusyTimeout: Duration = .seconds(10)

    // MARK: Creating

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
        return Vault(path: path, unlocked: UnlockedVault(store: VaultStore(database), keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
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
        return Vault(path: storage.location, unlocked: UnlockedVault(store: VaultStore(storage), keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
    }

    /// Opens the vault in `storage` with its raw key (see ``create(in:key:)``).
    package static func open(_ storage: sending any VaultStorage, key: VaultKey) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), path: storage.location, upgradingFormatOne: false, passphrase: nil, keyEncryptionKey: rawKeyUnlocking(key))
    }

    /// Opens the vault in `storage` with its passphrase (see ``create(in:key:)``).
    package static func open(_ storage: sending any VaultStorage, passphrase: SecretBytes) throws(VaultError) -> Vault {
        try Sodium.ensureInitialized()
        return try unlock(VaultStore(storage), path: storage.location, upgradingFormatOne: false, passphrase: passphrase, keyEncryptionKey: passphraseUnlocking(passphrase, noting: storage.location))
    }

    static func openDatabase(_ path: String, busyTimeout: Duration) throws(VaultError) -> VaultDatabase {
        try VaultStore.converting { () throws(StorageError) in
            try VaultDatabase.openExisting(path, busyTimeoutMilliseconds: Int32(clamping: max(0, busyTimeout.clampedMilliseconds)))
        }
    }

    // MARK: Opening

    /// Opens an existing vault with its passphrase.
    ///
    /// Opening checks the header and the schema, whatever the vault's size: each read
    /// checks what it touches (see ``verify()-1pdra``). A vault of format 2 is verified whole
    /// and upgraded to format 3 in place, once, in one transaction. A vault of format 1,
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
        return try unlock(VaultStore(database), path: path, upgradingFormatOne: upgradingFormatOne, passphrase: passphrase, keyEncryptionKey: derive)
    }

    /// Checks the header and schema of an opened storage, unwraps the master key, and
    /// upgrades an older format: what opening does on any ``VaultStorage``.
    private static func unlock(
        _ store: sending VaultStore, path: String, upgradingFormatOne: Bool, passphrase: SecretBytes?,
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
        if header.formatVersion < VaultHeader.currentFormatVersion {
            header = try FormatUpgrade.run(store, keys: keys, keyEncryptionKey: keyEncryptionKey, upgradingFormatOne: upgradingFormatOne)
        }
        return Vault(path: path, unlocked: UnlockedVault(store: store, keys: keys, keyEncryptionKey: keyEncryptionKey, passphrase: passphrase.map(UnlockedVault.held), header: header))
    }

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

    /// Closes the file and wipes the keys; later calls throw ``VaultError/closed``.
    /// Releasing the last reference does the same. Tasks still on ``executor`` move to
    /// Swift's global executor.
    public func close() {
        executor.retire()
        // From inside a batch closure the lock is this thread's: close when it is released.
        if lockOwner.load(ordering: .acquiring) == ThreadIdentity.current {
            closeWhenUnlocked.store(true, ordering: .releasing)
            return
        }
        state.withLock { $0 = nil }
    }

    deinit { executor.retire() }

    // MARK: Changing the keys

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
        let wrapping = try UnlockedVault.NewWrapping(passphrase: passphrase, kdf: kdf, noting: path)
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
        let wrapping = try UnlockedVault.NewWrapping(passphrase: passphrase, kdf: kdf, noting: path)
        try withUnlocked { (vault) throws(VaultError) in try vault.rekey(removingHost: nil, wrapping: wrapping) }
    }

    /// ``rekey()-8484f``, also dropping the host key wrap named `removedHost` (``removeHost(_:)``):
    /// every remaining wrap, the header's and each other host's, is rewritten to the new
    /// master key, so the removed host's wrap opens nothing the vault still holds.
    func rekey(removingHost removedHost: String) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in try vault.rekey(removingHost: removedHost, wrapping: nil) }
    }

    // MARK: Rollback guard

    /// Checks this vault against the newest state of it this user has seen, recorded in
    /// `rollbackGuard`'s directory, and from now on records each commit there.
    ///
    /// Call it right after opening. It is O(1): it reads the vault's authenticated
    /// generation and manifest root, and one record of at most 2161 bytes; each later commit adds one
    /// small write to the record (see ``RollbackGuard``).
    ///
    /// - Parameters:
    ///   - rollbackGuard: where this user's records of the vaults they have seen live.
    ///   - acceptingCurrentState: take the vault as it is as the newest state, even if it
    ///     is older than the record: for a backup restored on purpose.
    /// - Throws: ``VaultError/rolledBack(path:seenGeneration:fileGeneration:)`` when the
    ///   file is older than the record (replaced with an older copy, or commits lost
    ///   from its `-wal`), holds a different state at the recorded generation, or is under
    ///   a master key the vault has retired (a removed host's pre-removal state written
    ///   back at a higher generation);
    ///   ``VaultError/tampered(reason:)`` if the header does not authenticate;
    ///   ``VaultError/io(path:errno:)`` and the permission errors for the record's directory.
    public func useRollbackGuard(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool = false) throws(VaultError) {
        _ = try useRollbackGuard(rollbackGuard, acceptingCurrentState: acceptingCurrentState, readOnlyFallback: false)
    }

    /// ``useRollbackGuard(_:acceptingCurrentState:)-5nooc`` for a tool whose reads must not
    /// depend on the guard's own state being writable (a read-only or full state
    /// directory, an immutable record, a home directory that is missing or not this
    /// user's).
    ///
    /// It compares with the record whenever one can be read, exactly as the strict form
    /// does, and records when it can. When the state could not be recorded, it returns
    /// why instead of throwing, and from then on every write of this handle throws that
    /// error before it starts: a commit the record could not follow would leave the
    /// record behind the file for good.
    ///
    /// - Returns: why this state could not be recorded (its path is in the guard's
    ///   directory), or `nil` when it was recorded or already was.
    /// - Throws: what ``useRollbackGuard(_:acceptingCurrentState:)-5nooc`` throws, except
    ///   the errors of creating or writing the guard's directory, key and record.
    @discardableResult
    public func useRollbackGuardReadingWhereUnwritable(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool = false) throws(VaultError) -> VaultError? {
        try useRollbackGuard(rollbackGuard, acceptingCurrentState: acceptingCurrentState, readOnlyFallback: true)
    }

    private func useRollbackGuard(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool, readOnlyFallback: Bool) throws(VaultError) -> VaultError? {
        try withUnlocked { (vault) throws(VaultError) -> VaultError? in
            let vaultID = try vault.verifiedStateFollowingRekey().vaultID
            let file = try RollbackGuardFile(rollbackGuard, vaultID: vaultID, vaultPath: path, readOnlyFallback: readOnlyFallback)
            let unrecorded = try file.check(keys: vault.keys, accepting: acceptingCurrentState) { () throws(VaultError) in
                // Read under the record's lock, following a re-key made since this
                // handle unlocked the vault: its old keys do not verify the new header.
                let state = try vault.verifiedStateFollowingRekey()
                guard state.vaultID == vaultID else { throw .tampered(reason: .vaultIDChanged) }
                return (state.generation, state.root, vault.keys.keyCheck)
            }
            vault.rollbackGuard = file
            return unrecorded
        }
    }

    // MARK: Plumbing

    /// Runs `body` on the open vault under the mutex.
    func withUnlocked<Result: Sendable>(_ body: (inout UnlockedVault) throws(VaultError) -> Result) throws(VaultError) -> Result {
        let thread = ThreadIdentity.current
        guard lockOwner.load(ordering: .acquiring) != thread else { throw .reentrantCall }
        return try state.withLock { (state) throws(VaultError) -> Result in
            lockOwner.store(thread, ordering: .releasing)
            defer { lockOwner.store(0, ordering: .releasing) }
            guard var vault = state.take() else { throw .closed }
            defer { state = closeWhenUnlocked.exchange(false, ordering: .acquiringAndReleasing) ? nil : vault }
            vault.manifestCheck.guardPending = nil
            // Another process changed the keys in a way this handle could not follow inside
            // the transaction (a new salt for the same passphrase). `keyChanged` is thrown
            // before anything is written, so `body` runs again when the passphrase this
            // handle holds opens the new wrapping: again after each such change that lands
            // in between (each one another process's commit), up to a bound.
            // A state another process committed, verified by this call, is compared with the
            // rollback record after it, outside every transaction (see
            // checkPendingRollbackGuard); also when the call failed (an item not found):
            // what it verified is kept for later calls, a prepared set's among them.
            var follows = 0
            while true {
                let result: Result
                do throws(VaultError) {
                    result = try body(&vault)
                } catch .keyChanged {
                    try Self.checkPendingRollbackGuardFollowing(&vault)
                    follows += 1
                    guard follows <= Self.maximumFollowedKeyChanges, try vault.followChangedWrapping() else { throw .keyChanged }
                    continue
                } catch {
                    try Self.checkPendingRollbackGuardFollowing(&vault)
                    throw error
                }
                try Self.checkPendingRollbackGuardFollowing(&vault)
                return result
            }
        }
    }

    /// How many changes of the wrapping by other processes one call follows before it
    /// gives up with ``VaultError/keyChanged``: far more than a person runs `vault passwd`
    /// while one write waits.
    private static let maximumFollowedKeyChanges = 16

    /// The rollback guard's comparison of a state this call verified, following key
    /// changes as the call itself does: the comparison reads the state again, which a
    /// passphrase change by another process in between makes unreadable with the keys
    /// this handle held (a successful call must not then fail with `keyChanged`).
    private static func checkPendingRollbackGuardFollowing(_ vault: inout UnlockedVault) throws(VaultError) {
        var follows = 0
        while true {
            do throws(VaultError) {
                return try vault.checkPendingRollbackGuard()
            } catch .keyChanged {
                follows += 1
                guard follows <= maximumFollowedKeyChanges, try vault.followChangedWrapping() else { throw .keyChanged }
            }
        }
    }
}
