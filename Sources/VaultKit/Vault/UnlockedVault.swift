#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An open vault storage together with the keys that unlock it: the state behind a
/// ``Vault``'s mutex. All item logic lives here so ``Vault`` and ``VaultBatch`` share it.
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

    enum WriteMode {
        case add, update, set
    }

    // MARK: Keys

    /// Unwraps the master key in `header` with `keyEncryptionKey` under the rules of the
    /// header's format version (or of `formatVersion`), or `nil` if it does not open.
    static func unwrapMasterKey(_ header: VaultHeader, with keyEncryptionKey: SecureBuffer, asFormat formatVersion: Int? = nil) -> SecureBuffer? {
        let wrappingKey = KeyHierarchy.wrappingKey(keyEncryptionKey: keyEncryptionKey, formatVersion: formatVersion ?? header.formatVersion)
        return header.wrappedMasterKey.withUnsafeBytes { wrapped in
            header.masterKeyNonce.withUnsafeBytes { nonce in
                SecretBox.open(sealed: wrapped, nonce: nonce, key: wrappingKey, lockInMemory: true)
            }
        }
    }

    /// Wraps `masterKey` under `keyEncryptionKey` with a fresh nonce, for the current format.
    static func wrap(masterKey: SecureBuffer, with keyEncryptionKey: SecureBuffer) -> (nonce: [UInt8], wrapped: [UInt8]) {
        let wrappingKey = KeyHierarchy.wrappingKey(keyEncryptionKey: keyEncryptionKey, formatVersion: VaultHeader.currentFormatVersion)
        var nonce = [UInt8](repeating: 0, count: SecretBox.nonceByteCount)
        let wrapped = nonce.withUnsafeMutableBytes { nonce in
            SecretBox.seal(plaintextCount: masterKey.count, key: wrappingKey, nonce: nonce) {
                plaintext in masterKey.withBytes { plaintext.copyMemory(from: $0) }
            }
        }
        return (nonce, wrapped)
    }

    /// The master key of `header` as this handle unlocks it: through the header's wrap
    /// with the key-encryption key, or through this host's wrap.
    func unwrapMasterKey(_ header: VaultHeader) throws(VaultError) -> SecureBuffer? {
        if let keyEncryptionKey { return Self.unwrapMasterKey(header, with: keyEncryptionKey) }
        guard let hostKey, let wraps = try store.readHostWraps() else { return nil }
        // Re-keyed wraps are trusted only when the pinned identity signed them.
        return HostWraps.open(try HostWraps.verifiedHosts(wraps, vaultID: header.vaultID, pinned: hostPins), with: hostKey)
    }

    /// Follows a re-key made by another process since this one unlocked the vault.
    ///
    /// Called inside every write transaction, so no item is ever sealed under a master
    /// key the file no longer holds, and after a read that failed to authenticate.
    /// - Returns: whether the keys changed.
    @discardableResult
    mutating func refreshKeysIfRekeyed() throws(VaultError) -> Bool {
        guard try store.readMasterKeyCheck() != keys.keyCheck else { return false }
        let newHeader = try store.readHeader()
        guard let masterKey = try unwrapMasterKey(newHeader) else { throw .keyChanged }
        let newKeys = KeyHierarchy(masterKey: masterKey)
        guard newKeys.keyCheck == newHeader.masterKeyCheck else { throw .tampered(reason: .keyCheckMismatch) }
        keys = newKeys
        header = newHeader
        manifestCheck.keysChanged()
        return true
    }

    /// Runs `body` in a write transaction that first follows a re-key by another
    /// process and last applies the manifest changes `body`'s writes recorded, so rows
    /// and manifest always commit together.
    ///
    /// - Parameter opening: the insert `body` opens with, prepared before the lock, which a
    ///   storage may send with it (``UnlockedVault/set(_:service:account:label:generic:)``).
    mutating func writeTransaction<Result>(
        opening: OpeningInsert? = nil, _ body: (UnlockedVault) throws(VaultError) -> Result
    ) throws(VaultError) -> Result {
        try rollbackGuard?.ensureRecordable()
        // Changes of a transaction that rolls back must not outlive it.
        manifestChanges.removeAll()
        pendingInserts.reset()
        manifestCheck.verified.discardTransaction()
        defer {
            manifestChanges.removeAll()
            pendingInserts.reset()
            manifestCheck.holdsWriteLock = false
            manifestCheck.verified.discardTransaction()
        }
        var versionBefore: Int64 = -1
        manifestCheck.committing = nil
        let result = try store.writeTransaction(opening: opening) { () throws(VaultError) in
            try refreshKeysIfRekeyed()
            // What other connections committed before this lock was taken, checked once:
            // refreshKeysIfRekeyed's read started this transaction's snapshot.
            versionBefore = store.snapshotVersion
            if versionBefore != manifestCheck.dataVersion { manifestCheck.reset(dataVersion: versionBefore) }
            manifestCheck.holdsWriteLock = true
            let result = try body(self)
            try flushPendingInserts()
            // A gathered insert failed (and the caller went on): rows may be stored whose
            // manifest terms are not recorded.
            if let failure = pendingInserts.failure { throw failure }
            try applyManifestChanges()
            return result
        }
        let carried = manifestCheck.dataVersion == versionBefore
        manifestCheck.ownCommit(from: versionBefore, to: store.snapshotVersion)
        // The rows and root kept for prepared sets move on with this commit's changes.
        if carried { manifestCheck.verified.applyTransaction() }
        recordCommit()
        return result
    }

    /// Tells the rollback guard what the transaction just committed. After the commit, so
    /// the record is never ahead of the file; best effort, since the write has happened
    /// and a record that lags only weakens the next check.
    func recordCommit() {
        guard let committed = manifestCheck.committing else { return }
        manifestCheck.committing = nil
        rollbackGuard?.record((committed.generation, committed.root, keys.keyCheck), keys: keys)
    }

    // MARK: Reading

    /// The names a row was looked up by: its lookup id is their keyed hash.
    typealias Names = (service: String, account: String)

    /// Opens the record stored in `row`'s place and checks it belongs there.
    ///
    /// - Parameter expected: the names the row was found by, when the caller looked it up
    ///   by name; `nil` for rows read by scanning.
    /// - Returns: the attributes and the decrypted record, for callers that need the secret.
    func openRecord(lookupID: [UInt8], expected: Names?, nonce: UnsafeRawBufferPointer, sealed: UnsafeRawBufferPointer) throws(VaultError) -> (VaultItem, SecureBuffer, Range<Int>) {
        try Self.openRecord(keys: keys, lookupID: lookupID, expected: expected, nonce: nonce, sealed: sealed)
    }

    /// ``openRecord(lookupID:expected:nonce:sealed:)`` with explicit keys, so the Benchmarks package
    /// can time exactly this code without a database (see `BenchmarkSupport.swift`).
    static func openRecord(keys: KeyHierarchy, lookupID: [UInt8], expected: Names?, nonce: UnsafeRawBufferPointer, sealed: UnsafeRawBufferPointer) throws(VaultError) -> (VaultItem, SecureBuffer, Range<Int>) {
        guard let plaintext = SecretBox.open(sealed: sealed, nonce: nonce, key: keys.sealingKey) else {
            throw .tampered(reason: .itemFailedAuthentication)
        }
        let (item, secretRange) = try plaintext.withBytes { (bytes) throws(VaultError) in try ItemRecord.decode(bytes) }
        // Binding (docs/FORMAT.md section 5): a valid record moved to another row is still rejected.
        // A row found by name has lookupID = H(expected names), so the record belongs
        // there exactly when it holds those names, byte for byte (not Swift's Unicode
        // equivalence, under which different bytes, and so different rows, compare
        // equal). That saves re-hashing on every read; a scanned row has no expected
        // names, so its lookup id is recomputed from the record's.
        let belongs = if let expected {
            ItemRecord.sameUTF8(item.service, expected.service) && ItemRecord.sameUTF8(item.account, expected.account)
        } else {
            keys.isLookupID(lookupID, service: item.service, account: item.account)
        }
        guard belongs else {
            throw .tampered(reason: .recordNotOfRow)
        }
        return (item, plaintext, secretRange)
    }

    /// Opens the record of a row read by ``VaultStorage/forEachRow(serviceTag:_:)``.
    func openRecord(_ row: StoredRow) throws(VaultError) -> (VaultItem, SecureBuffer, Range<Int>) {
        let result = row.nonce.withUnsafeBytes { nonce in
            row.sealed.withUnsafeBytes { sealed in
                Result { () throws(VaultError) in try openRecord(lookupID: row.lookupID, expected: nil, nonce: nonce, sealed: sealed) }
            }
        }
        return try result.get()
    }

    /// Reads one item, following a re-key by another process once if authentication fails.
    ///
    /// When this process has verified the item's manifest bucket, the read is one
    /// statement, accepted if it read the verified snapshot version (no other connection
    /// committed since). Otherwise the bucket is verified and the item read in one
    /// read transaction.
    mutating func read<Result>(
        service: String, account: String,
        _ body: (VaultItem, SecureBuffer, Range<Int>) throws(VaultError) -> Result
    ) throws(VaultError) -> Result {
        try Self.validate(service: service, account: account)
        // A re-key by another process changes every lookup id, so a read that meets one
        // (as a missing or unauthenticated row, or a manifest under other keys) looks
        // again under the new keys, once.
        var followedRekey = false
        while true {
            let lookupID = keys.lookupID(service: service, account: account)
            let bucket = Manifest.bucket(of: lookupID)
            do throws(VaultError) {
                var lookup = Lookup<Result>.unverified
                if manifestCheck.covers(bucket: bucket) {
                    lookup = try readRow(lookupID, service: service, account: account, onlyIfVerified: true, body)
                }
                if case .unverified = lookup {
                    lookup = try store.readTransaction { () throws(VaultError) in
                        try ensureManifestVerified(bucket: bucket)
                        return try readRow(lookupID, service: service, account: account, onlyIfVerified: false, body)
                    }
                }
                if case .found(let result) = lookup { return result }
                if !followedRekey, try refreshKeysIfRekeyed() { followedRekey = true; continue }
                throw .itemNotFound
            } catch let error where error.code == .tampered {
                if !followedRekey, try refreshKeysIfRekeyed() { followedRekey = true; continue }
                throw error
            }
        }
    }

    private enum Lookup<Value> {
        case found(Value)
        case missing
        /// Read from a snapshot other than the verified one: not to be trusted.
        case unverified
    }

    /// One statement's read of one row, then its record opened and handed to `body`.
    private func readRow<Result>(
        _ lookupID: [UInt8], service: String, account: String, onlyIfVerified: Bool,
        _ body: (VaultItem, SecureBuffer, Range<Int>) throws(VaultError) -> Result
    ) throws(VaultError) -> Lookup<Result> {
        let found = try store.withSealedItem(lookupID: lookupID) { (_, nonce, sealed) throws(VaultError) -> Lookup<Result> in
            if onlyIfVerified, store.snapshotVersion != manifestCheck.dataVersion { return .unverified }
            let (item, plaintext, range) = try openRecord(lookupID: lookupID, expected: (service, account), nonce: nonce, sealed: sealed)
            return .found(try body(item, plaintext, range))
        }
        if let found { return found }
        // No row: the statement has finished, and the version still names its snapshot.
        return onlyIfVerified && store.snapshotVersion != manifestCheck.dataVersion ? .unverified : .missing
    }

    /// Attributes of every item, or every item of one service, sorted by service then account.
    ///
    /// The whole manifest is verified, not only the buckets of the rows found: a row
    /// deleted, or given another service tag, would not be found at all. Rows and manifest
    /// are read in one snapshot, the rows first, so a storage that pipelines (PostgreSQL)
    /// sends them with the snapshot it verifies; a record that fails to open is reported
    /// only once the manifest has been checked, as when the check came first.
    mutating func list(service: String?) throws(VaultError) -> [VaultItem] {
        if let service { try Self.validate(service: service) }
        var followedRekey = false
        var items: [VaultItem] = []
        while true {
            let tag = service.map { keys.serviceTag(service: $0) }
            items.removeAll()
            var unopened: VaultError?
            // A check that fails may mean another process re-keyed the vault: followed once
            // (as verifyManifestFollowingRekey does), then the rows are read again under the new keys.
            let rekeyed = try store.readTransaction { () throws(VaultError) -> Bool in
                try store.forEachRow(serviceTag: tag) { (row) throws(VaultError) in
                    guard unopened == nil else { return }
                    do throws(VaultError) {
                        let (item, _, _) = try openRecord(row)
                        guard keys.isServiceTag(row.serviceTag, service: item.service) else {
                            throw VaultError.tampered(reason: .recordNotOfService)
                        }
                        items.append(item)
                    } catch {
                        unopened = error
                    }
                }
                do throws(VaultError) {
                    try ensureManifestVerified(bucket: nil)
                } catch {
                    guard error.code == .tampered, !followedRekey, try refreshKeysIfRekeyed() else { throw error }
                    return true
                }
                return false
            }
            if let unopened, !rekeyed { throw unopened }
            if !rekeyed { break }
            followedRekey = true
        }
        // By UTF-8 bytes, as docs/CLI.md promises: Swift's String order treats canonically
        // equivalent spellings (NFC and NFD) as equal, which are different items here.
        let order = ItemRecord.bytewiseOrder(of: items)
        return order.map { items[$0] }
    }

    // MARK: Writing (call inside a write transaction, after refreshKeysIfRekeyed)

    /// Adds or updates one item; `label` and `generic` of `nil` keep the stored values.
    func write(
        _ mode: WriteMode, secret: SecretBytes,
        service: String, account: String, label: String?, generic: Data?
    ) throws(VaultError) {
        try Self.validateWrite(secret: secret, service: service, account: account, generic: generic)
        let lookupID = keys.lookupID(service: service, account: account)
        let serviceTag = keys.serviceTag(service: service)
        // An add or update must see the sets gathered before it.
        if mode != .set { try flushPendingInserts() }
        // A write builds on what is stored, so it refuses to build on tampered rows.
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        // A new item (the common case of add, set and bulk imports) is one insert; only an
        // existing item is read first, to keep its creation date and unchanged attributes.
        if mode != .update {
            let sealed = sealedAsNew(secret, service: service, account: account, label: label, generic: generic,
                                     lookupID: lookupID, serviceTag: serviceTag)
            let gather = store.insertGatherLimit
            if mode == .set, gather > 1 {
                // A second set of the same item must build on the first.
                if pendingInserts.contains(lookupID: sealed.lookupID) { try flushPendingInserts() }
                pendingInserts.append(.init(sealed: sealed, secret: secret, service: service, account: account, label: label, generic: generic))
                if pendingInserts.entries.count >= gather { try flushPendingInserts() }
                return
            }
            if try insertIfAbsent(sealed) {
                recordManifestAddition(sealed)
                return
            }
            if mode == .add { throw .duplicateItem }
        }
        // The replaced row's identity, to take its term out of the manifest.
        let existing = try store.withSealedItem(lookupID: lookupID) { (storedTag, nonce, sealed) throws(VaultError) in
            let item = try openRecord(lookupID: lookupID, expected: (service, account), nonce: nonce, sealed: sealed).0
            return StoredItem(item: item, serviceTag: Array(storedTag), nonce: Array(nonce))
        }
        try replace(mode, existing: existing, secret: secret, service: service, account: account, label: label, generic: generic,
                    lookupID: lookupID, serviceTag: serviceTag)
    }

    /// The checks every write makes before anything is sealed or stored.
    static func validateWrite(secret: SecretBytes, service: String, account: String, generic: Data?) throws(VaultError) {
        try validate(service: service, account: account)
        guard secret.count <= maximumDataByteCount, (generic?.count ?? 0) <= maximumDataByteCount else {
            throw .invalidArgument(.dataTooLarge)
        }
    }

    /// A stored item's attributes and the identity of its row.
    struct StoredItem {
        let item: VaultItem
        let serviceTag: [UInt8]
        let nonce: [UInt8]
    }

    /// Writes an item's row over `existing` (`nil`: none stored), keeping its creation date
    /// and the attributes given as `nil`, and records both rows in the manifest.
    private func replace(
        _ mode: WriteMode, existing: StoredItem?, secret: SecretBytes,
        service: String, account: String, label: String?, generic: Data?, lookupID: [UInt8], serviceTag: [UInt8]
    ) throws(VaultError) {
        switch (mode, existing) {
        case (.add, .some): throw .duplicateItem
        case (.update, .none): throw .itemNotFound
        default: break
        }
        let now = Date()
        let item = VaultItem(
            service: service, account: account,
            label: label ?? existing?.item.label, generic: generic ?? existing?.item.generic,
            created: existing?.item.created ?? now, modified: now
        )
        let sealed = seal(item, secret: secret, lookupID: lookupID, serviceTag: serviceTag)
        try upsert(sealed)
        // Recorded only once the row is replaced: a batch may catch an error and go on.
        if let existing {
            try recordManifestRemoval(lookupID: lookupID, serviceTag: existing.serviceTag, nonce: existing.nonce)
        }
        recordManifestAddition(sealed)
    }

    /// Seals `item` and `secret` into a row under the current keys; the caller computes
    /// the row's index hashes (`lookupID`, `serviceTag`) from the item's names.
    func seal(_ item: VaultItem, secret: SecretBytes, lookupID: [UInt8], serviceTag: [UInt8]) -> SealedItem {
        Self.seal(item, secret: secret, lookupID: lookupID, serviceTag: serviceTag, keys: keys)
    }

    /// ``seal(_:secret:lookupID:serviceTag:)`` with explicit keys, for the same reason as
    /// ``openRecord(keys:lookupID:expected:nonce:sealed:)``.
    static func seal(_ item: VaultItem, secret: SecretBytes, lookupID: [UInt8], serviceTag: [UInt8], keys: KeyHierarchy) -> SealedItem {
        var nonce = SecretBox.Nonce()
        let count = ItemRecord.encodedCount(attributes: item, secretCount: secret.count)
        let sealed = nonce.withUnsafeMutableBytes { nonce in
            secret.withUnsafeBytes { secret in
                SecretBox.seal(plaintextCount: count, key: keys.sealingKey, nonce: nonce) { plaintext in
                    ItemRecord.encode(attributes: item, secret: secret, into: plaintext)
                }
            }
        }
        return SealedItem(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce, sealed: sealed)
    }

    /// A row to write: what ``seal(_:secret:lookupID:serviceTag:)`` returns. The nonce
    /// is inline, so the sealed array is the only allocation of a seal.
    struct SealedItem: Sendable {
        var lookupID: [UInt8]
        var serviceTag: [UInt8]
        var nonce: SecretBox.Nonce
        var sealed: [UInt8]

        /// The row it is stored as.
        var row: StoredRow {
            nonce.withUnsafeBytes { StoredRow(lookupID: lookupID, serviceTag: serviceTag, nonce: Array($0), sealed: sealed) }
        }
    }

    /// A new item (created and modified now) sealed for its row.
    func sealedAsNew(
        _ secret: SecretBytes, service: String, account: String, label: String?, generic: Data?, lookupID: [UInt8], serviceTag: [UInt8]
    ) -> SealedItem {
        let now = Date()
        let new = VaultItem(service: service, account: account, label: label, generic: generic, created: now, modified: now)
        return seal(new, secret: secret, lookupID: lookupID, serviceTag: serviceTag)
    }

    /// Inserts the gathered `set`s in one storage call, then writes again over each item
    /// found in place. A failure keeps the transaction from committing
    /// (``PendingInserts/failure``), even if the caller catches it and goes on.
    func flushPendingInserts() throws(VaultError) {
        let entries = pendingInserts.take()
        guard !entries.isEmpty else { return }
        do throws(VaultError) {
            let found = try store.insertAllIfAbsent(entries.map(\.sealed.row))
            guard found.count == entries.count else { throw VaultError.corrupted(reason: .unexpectedStorageError) }
            for (entry, row) in zip(entries, found) {
                guard let row else {
                    recordManifestAddition(entry.sealed)
                    continue
                }
                // The row in this item's place, and its record bound to that place.
                guard row.lookupID == entry.sealed.lookupID else { throw VaultError.corrupted(reason: .unexpectedStorageError) }
                let item = try openRecord(row).0
                try replace(.set, existing: StoredItem(item: item, serviceTag: row.serviceTag, nonce: row.nonce), secret: entry.secret,
                            service: entry.service, account: entry.account, label: entry.label, generic: entry.generic,
                            lookupID: entry.sealed.lookupID, serviceTag: entry.sealed.serviceTag)
            }
        } catch {
            pendingInserts.failure = error
            throw error
        }
    }

    /// Inserts the row of a sealed item unless its lookup id exists; returns whether it did.
    func insertIfAbsent(_ item: SealedItem) throws(VaultError) -> Bool {
        try item.nonce.withUnsafeBytes { (nonce) throws(VaultError) in
            try store.insertIfAbsent(lookupID: item.lookupID, serviceTag: item.serviceTag, nonce: nonce, sealed: item.sealed)
        }
    }

    /// Inserts or replaces the row of a sealed item.
    func upsert(_ item: SealedItem) throws(VaultError) {
        try item.nonce.withUnsafeBytes { (nonce) throws(VaultError) in
            try store.upsert(lookupID: item.lookupID, serviceTag: item.serviceTag, nonce: nonce, sealed: item.sealed)
        }
    }

    func delete(service: String, account: String) throws(VaultError) -> Bool {
        try Self.validate(service: service, account: account)
        let lookupID = keys.lookupID(service: service, account: account)
        try flushPendingInserts()
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        guard let deleted = try store.delete(lookupID: lookupID) else { return false }
        try recordManifestRemoval(lookupID: lookupID, serviceTag: deleted.serviceTag, nonce: deleted.nonce)
        return true
    }

    func deleteAll(service: String) throws(VaultError) -> Int {
        try Self.validate(service: service)
        try flushPendingInserts()
        try ensureManifestVerified(bucket: nil)
        return try store.deleteAll(serviceTag: keys.serviceTag(service: service)) { (lookupID, serviceTag, nonce) throws(VaultError) in
            try recordManifestRemoval(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce)
        }
    }

    // MARK: Arguments

    /// A longest name, so a record's lengths always fit its 4-byte prefixes with room to spare.
    static let maximumNameByteCount = 64 * 1024
    /// Secrets and generic data: far below SQLite's 1 GB blob limit.
    static let maximumDataByteCount = 64 * 1024 * 1024

    static func validate(service: String, account: String? = nil) throws(VaultError) {
        guard !service.isEmpty else { throw .invalidArgument(.emptyService) }
        guard service.utf8.count <= maximumNameByteCount else { throw .invalidArgument(.serviceTooLong) }
        if let account {
            guard account.utf8.count <= maximumNameByteCount else { throw .invalidArgument(.accountTooLong) }
        }
    }
}
