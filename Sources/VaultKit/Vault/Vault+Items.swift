#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Vault {
    // MARK: Writing items

    /// Stores `secret` for (`service`, `account`), adding the item or updating it, as one
    /// atomic step: there is no window between "does it exist?" and the write in which
    /// another task or process could slip in.
    ///
    /// For example:
    ///
    /// ```swift
    /// try vault.set("s3cr3t", service: "api.example.com", account: "alice", label: "Example API")
    /// ```
    ///
    /// - Parameters:
    ///   - secret: the bytes to keep, sealed before they reach storage: a `String` (its
    ///     UTF-8), `Data`, `[UInt8]`, ``SecretBytes`` (not copied), or a type of your own
    ///     (``SecretBytesConvertible``). A copy VaultKit makes is wiped once sealed.
    ///   - service: what the secret is for (`kSecAttrService`), for example a host name.
    ///   - account: whose secret it is within the service (`kSecAttrAccount`).
    ///   - label: a name for people; `nil` keeps the stored label (none for a new item).
    ///   - generic: application data; `nil` keeps the stored data (none for a new item).
    ///   - keepHistory: keep the item written over as a version (``history(service:account:)-1eylc``),
    ///     within the vault's retention; `false` for a value nobody will want back, such
    ///     as a token refreshed every hour.
    /// - Throws: ``VaultError/Code/invalidArgument`` for an empty service; storage errors.
    public func set(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        let secret = secret.secretBytes
        try withUnlocked { (vault) throws(VaultError) in
            try vault.set(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
        }
    }

    /// Adds a new item; the secret is any ``SecretBytesConvertible``, as for ``set(_:service:account:label:generic:keepHistory:)-6l104``.
    ///
    /// - Throws: ``VaultError/duplicateItem`` if (`service`, `account`) already exists.
    public func add(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        try write(.add, secret.secretBytes, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    /// Replaces the secret of an existing item; `nil` attributes keep their stored values.
    /// With `keepHistory`, the item written over is kept as a version.
    ///
    /// - Throws: ``VaultError/itemNotFound`` if there is no such item.
    public func update(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) throws(VaultError) {
        try write(.update, secret.secretBytes, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
    }

    private func write(_ mode: UnlockedVault.WriteMode, _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, keepHistory: Bool) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in
                try vault.write(mode, secret: secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
            }
        }
    }

    /// Deletes one item; with `keepHistory`, its last version is kept
    /// (``history(service:account:)-1eylc``, ``restore(service:account:version:)-73zpe``).
    ///
    /// - Returns: whether it existed.
    @discardableResult
    public func delete(service: String, account: String, keepHistory: Bool = true) throws(VaultError) -> Bool {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in
                try vault.delete(service: service, account: account, keepHistory: keepHistory)
            }
        }
    }

    /// Deletes every item of `service`; with `keepHistory`, each one's last version is kept.
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func deleteAll(service: String, keepHistory: Bool = true) throws(VaultError) -> Int {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in
                try vault.deleteAll(service: service, keepHistory: keepHistory)
            }
        }
    }

    /// Applies several writes in one transaction: all of them or none, with one
    /// durable commit, which is what makes bulk imports fast.
    ///
    /// For example:
    ///
    /// ```swift
    /// try vault.batch { batch in
    ///     for (account, token) in tokens {
    ///         try batch.set(token, service: "api.example.com", account: account)
    ///     }
    /// }
    /// ```
    ///
    /// `body` runs while this vault is locked: a call to the same `Vault` from inside it
    /// throws ``VaultError/reentrantCall`` (use the batch), and the batch itself throws
    /// ``VaultError/batchEnded`` if used after `body` returns.
    ///
    /// - Returns: what `body` returns, once the transaction has committed.
    /// - Throws: whatever `body` throws, unchanged (your own error type comes back as
    ///   itself), after rolling back: nothing is written. Otherwise a ``VaultError``
    ///   for the batch's own failures, such as ``VaultError/busy(path:)``.
    public func batch<Result: Sendable>(_ body: (VaultBatch) throws -> Result) throws -> Result {
        var bodyError: (any Error)?
        do {
            return try withUnlocked { (vault) throws(VaultError) in
                try vault.writeTransaction { (vault) throws(VaultError) in
                    let scope = BatchScope()
                    defer { scope.close() }
                    do {
                        return try body(VaultBatch(vault: vault, scope: scope))
                    } catch {
                        // The transaction rolls back on a VaultError; the signal never
                        // leaves this function, the caller's own error does.
                        bodyError = error
                        throw VaultError.invalidArgument(.batchRolledBack)
                    }
                }
            }
        } catch {
            if let bodyError { throw bodyError }
            throw error
        }
    }

    // MARK: Reading items

    /// The secret of an item, in memory that is zeroed when released.
    ///
    /// - Throws: ``VaultError/itemNotFound``; ``VaultError/tampered(reason:)`` if the
    ///   stored item was modified or moved, or if the vault's manifest shows that a row
    ///   of its bucket (this one included) was deleted or put back at an older version.
    public func secret(service: String, account: String) throws(VaultError) -> SecretBytes {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.read(service: service, account: account) { (_, plaintext, range) throws(VaultError) in
                SecretBytes(record: plaintext, range: range)
            }
        }
    }

    /// The secret of an item as a `String`.
    ///
    /// - Throws: ``VaultError/secretNotUTF8`` if the bytes are not UTF-8, and the errors of ``secret(service:account:)-5mo0z``.
    public func string(service: String, account: String) throws(VaultError) -> String {
        guard let string = try secret(service: service, account: account).string() else {
            throw VaultError.secretNotUTF8
        }
        return string
    }

    /// The secret of an item as `Data` (an ordinary copy, not zeroed by VaultKit).
    public func data(service: String, account: String) throws(VaultError) -> Data {
        try secret(service: service, account: account).data()
    }

    /// Calls `body` with the secret bytes while they are in protected memory; nothing is copied.
    public func withSecret<Result>(service: String, account: String, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        try secret(service: service, account: account).withUnsafeBytes(body)
    }

    /// The attributes of one item, without its secret.
    ///
    /// - Throws: ``VaultError/itemNotFound``.
    public func item(service: String, account: String) throws(VaultError) -> VaultItem {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.read(service: service, account: account) { (item, _, _) throws(VaultError) in item }
        }
    }

    /// The item and its secret, from one read of one record, or `nil` when there is no
    /// such item: the one read that returns `nil` rather than throwing
    /// ``VaultError/itemNotFound``. Every other failure is thrown.
    ///
    /// ```swift
    /// guard let entry = try vault.entry(service: "api.example.com", account: "alice") else { return signIn() }
    /// let token = try entry.string()
    /// ```
    ///
    /// - Throws: ``VaultError/tampered(reason:)`` and the other errors of ``secret(service:account:)-5mo0z``,
    ///   except ``VaultError/itemNotFound``.
    public func entry(service: String, account: String) throws(VaultError) -> VaultEntry? {
        try nilIfMissing { () throws(VaultError) in
            try withUnlocked { (vault) throws(VaultError) in
                try vault.read(service: service, account: account) { (item, plaintext, range) throws(VaultError) in
                    VaultEntry(item: item, secret: SecretBytes(record: plaintext, range: range))
                }
            }
        }
    }

    /// `read`'s result, or `nil` for ``VaultError/itemNotFound``.
    private func nilIfMissing<Result>(_ read: () throws(VaultError) -> Result) throws(VaultError) -> Result? {
        do {
            return try read()
        } catch .itemNotFound {
            return nil
        }
    }

    /// The attributes and the secret of one item as a tuple.
    ///
    /// - Throws: ``VaultError/itemNotFound``; ``VaultError/tampered(reason:)``.
    @available(*, deprecated, message: "use entry(service:account:), which returns a VaultEntry, or nil when the item is missing")
    public func itemWithSecret(service: String, account: String) throws(VaultError) -> (item: VaultItem, secret: SecretBytes) {
        guard let entry = try entry(service: service, account: account) else { throw .itemNotFound }
        return (entry.item, entry.secret)
    }

    /// Whether an item exists for (`service`, `account`).
    public func contains(service: String, account: String) throws(VaultError) -> Bool {
        // The attributes only: the secret is not copied out to answer a yes or no.
        try nilIfMissing { () throws(VaultError) in try item(service: service, account: account) } != nil
    }

    /// The attributes (never the secrets) of all items, or of one service's items,
    /// sorted by service and then account, comparing their UTF-8 bytes (an NFC and an
    /// NFD spelling of a name are two items, and sort apart).
    ///
    /// The whole manifest is checked first (O(n) once, then again only after another
    /// process writes): an item deleted behind VaultKit's back throws
    /// ``VaultError/tampered(reason:)`` rather than being silently left out.
    public func items(service: String? = nil) throws(VaultError) -> [VaultItem] {
        try withUnlocked { (vault) throws(VaultError) in try vault.list(service: service) }
    }

    // MARK: Backing up

    /// Writes a consistent copy of the vault to a new file at `path` and verifies it.
    ///
    /// Copying the vault file alone is not a backup: commits may still be in its
    /// `-wal` side file, and a copy taken while a process writes can be torn. This
    /// copies one snapshot with SQLite's online backup, while other processes go on
    /// reading and writing; the copy is created with mode 0600 (parent directories 0700),
    /// appears complete or not at all, is synced to disk, and is then opened with the
    /// same keys and verified whole (``verify()-1pdra``) before this returns.
    /// Errors name `path`, not the hidden file the copy is built in. A backup killed
    /// halfway leaves that file (`.NAME.<random>.creating`) and its `-journal` beside
    /// `path`; the next backup to `path` removes them, unless a running backup holds them.
    ///
    /// For example:
    ///
    /// ```swift
    /// try vault.backup(to: "/mnt/usb/app-2026-11-23.vault")
    /// ```
    ///
    /// - Returns: the number of items in the copy.
    /// - Throws: ``VaultError/vaultAlreadyExists(path:)`` if anything is at `path`,
    ///   ``VaultError/io(path:errno:)``, or any error ``verify()-1pdra`` throws for the copy.
    @discardableResult
    public func backup(to path: String) throws(VaultError) -> Int {
        try FileSystem.createParentDirectories(of: path)
        try FileSystem.checkDirectory(of: path)
        if FileSystem.size(of: path) != nil { throw .vaultAlreadyExists(path: path) }
        FileSystem.removeAbandonedTemporaryFiles(besides: path)
        let (temporary, lock) = try FileSystem.createLockedTemporaryFile(besides: path)
        defer { FileSystem.releaseLock(lock) }
        do {
            try withUnlocked { (vault) throws(VaultError) in
                // A file-only concern, outside the storage seam: only a vault file has one.
                guard let file = vault.store.storage as? any BackupCapableStorage else { throw .invalidArgument(.backupNeedsVaultFile) }
                try VaultStore.converting { () throws(StorageError) in try file.backup(into: temporary) }
            }
            try FileSystem.publish(temporary, at: path)
        } catch {
            FileSystem.removeDatabaseFiles(temporary)
            // The caller knows the destination, not the hidden file the copy was built in.
            throw error.path?.hasPrefix(temporary) == true ? error.naming(path) : error
        }
        // The copy, opened with this vault's keys, must verify as a whole.
        return try withUnlocked { (vault) throws(VaultError) in
            let file = try VaultStore.converting { () throws(StorageError) in try VaultDatabase.openExisting(path, busyTimeoutMilliseconds: 5_000) }
            var copy = UnlockedVault(
                store: VaultStore(file),
                keys: vault.keys, keyEncryptionKey: vault.keyEncryptionKey, header: vault.header
            )
            try copy.store.checkSchema(formatVersion: vault.header.formatVersion)
            guard try copy.store.readMasterKeyCheck() == vault.keys.keyCheck else { throw .keyChanged }
            try copy.ensureManifestVerified(bucket: nil, force: true)
            return try copy.list(service: nil).count
        }
    }

    // MARK: Verifying

    /// Checks the whole vault now: every row against the manifest (nothing deleted,
    /// added or rolled back behind VaultKit's back), and every record's authentication
    /// and binding to its row and service. Reads check this lazily for what they touch;
    /// call `verify()` after restoring a file or on a schedule. O(n).
    ///
    /// - Returns: the number of items checked.
    /// - Throws: ``VaultError/tampered(reason:)`` or ``VaultError/corrupted(reason:)``
    ///   naming the first problem found.
    @discardableResult
    public func verify() throws(VaultError) -> Int {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.verifyManifestFollowingRekey(bucket: nil, force: true)
            return try vault.list(service: nil).count
        }
    }
}
