#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writing items: adding, updating, setting and deleting rows, each change recorded for
/// the manifest. Call inside a write transaction, after `refreshKeysIfRekeyed`.
extension UnlockedVault {
    enum WriteMode {
        case add, update, set

        /// What the record written says made it.
        var operation: VaultChange.Operation {
            switch self {
            case .add: .add
            case .update: .update
            case .set: .set
            }
        }
    }

    /// Adds or updates one item; `label` and `generic` of `nil` keep the stored values.
    /// With `keepHistory`, an item written over is kept as a version (retention permitting).
    func write(
        _ mode: WriteMode, secret: SecretBytes,
        service: String, account: String, label: String?, generic: Data?, keepHistory: Bool = true
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
            let sealed = sealedAsNew(mode.operation, secret, service: service, account: account, label: label, generic: generic,
                                     lookupID: lookupID, serviceTag: serviceTag)
            let gather = store.insertGatherLimit
            if mode == .set, gather > 1 {
                // A second set of the same item must build on the first.
                if pendingInserts.contains(lookupID: sealed.lookupID) { try flushPendingInserts() }
                pendingInserts.append(.init(sealed: sealed, secret: secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory))
                if pendingInserts.entries.count >= gather { try flushPendingInserts() }
                return
            }
            if try insertIfAbsent(sealed) {
                recordManifestAddition(sealed)
                return
            }
            if mode == .add { throw .duplicateItem }
        }
        let existing = try storedItem(lookupID: lookupID, service: service, account: account)
        try replace(mode, existing: existing, secret: secret, service: service, account: account, label: label, generic: generic,
                    lookupID: lookupID, serviceTag: serviceTag, keepHistory: keepHistory)
    }

    /// A stored item: its record opened, and the identity of its row (to take its term
    /// out of the manifest).
    struct StoredItem {
        let item: VaultItem
        let serviceTag: [UInt8]
        let nonce: [UInt8]
        /// The decrypted record and the secret's range in it, to keep it as a version.
        let plaintext: SecureBuffer
        let secretRange: Range<Int>
        let provenance: RecordProvenance

        init(_ opened: OpenedRecord, serviceTag: [UInt8], nonce: [UInt8]) {
            (item, plaintext, secretRange, provenance) = opened
            self.serviceTag = serviceTag
            self.nonce = nonce
        }

        var secret: SecretBytes { SecretBytes(record: plaintext, range: secretRange) }
    }

    /// The item stored at `lookupID` (the row of `service`, `account`), or `nil`.
    func storedItem(lookupID: [UInt8], service: String, account: String) throws(VaultError) -> StoredItem? {
        try store.withSealedItem(lookupID: lookupID) { (storedTag, nonce, sealed) throws(VaultError) in
            let opened = try openRecord(lookupID: lookupID, expected: (service, account), nonce: nonce, sealed: sealed)
            return StoredItem(opened, serviceTag: Array(storedTag), nonce: Array(nonce))
        }
    }

    /// Writes an item's row over `existing` (`nil`: none stored), keeping its creation date
    /// and the attributes given as `nil`, and records both rows in the manifest; with
    /// `keepHistory`, `existing` is kept as a version first (``archive(_:because:keepHistory:)``).
    private func replace(
        _ mode: WriteMode, existing: StoredItem?, secret: SecretBytes,
        service: String, account: String, label: String?, generic: Data?, lookupID: [UInt8], serviceTag: [UInt8],
        keepHistory: Bool
    ) throws(VaultError) {
        switch (mode, existing) {
        case (.add, .some): throw .duplicateItem
        case (.update, .none): throw .itemNotFound
        default: break
        }
        // The row read is built on (kept, its term taken out): it must be the one verified.
        if existing != nil { try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID)) }
        let number = try existing.map { (existing) throws(VaultError) in
            try archive(existing, because: mode.operation, keepHistory: keepHistory)
        } ?? 0
        let now = Date()
        let item = VaultItem(
            service: service, account: account,
            label: label ?? existing?.item.label, generic: generic ?? existing?.item.generic,
            created: existing?.item.created ?? now, modified: now
        )
        let sealed = seal(item, secret: secret, provenance: provenance(number: number, mode.operation), lookupID: lookupID, serviceTag: serviceTag)
        try upsert(sealed)
        // Recorded only once the row is replaced: a batch may catch an error and go on.
        if let existing {
            try recordManifestRemoval(lookupID: lookupID, serviceTag: existing.serviceTag, nonce: existing.nonce)
        }
        recordManifestAddition(sealed)
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
                let opened = try openRecord(row)
                // A kept version's record at an item's row id fails its binding above.
                try replace(.set, existing: StoredItem(opened, serviceTag: row.serviceTag, nonce: row.nonce), secret: entry.secret,
                            service: entry.service, account: entry.account, label: entry.label, generic: entry.generic,
                            lookupID: entry.sealed.lookupID, serviceTag: entry.sealed.serviceTag, keepHistory: entry.keepHistory)
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

    /// Deletes one item; with `keepHistory`, its last record is kept as a version first.
    func delete(service: String, account: String, keepHistory: Bool = true) throws(VaultError) -> Bool {
        try Self.validate(service: service, account: account)
        let lookupID = keys.lookupID(service: service, account: account)
        try flushPendingInserts()
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        if keepHistory {
            guard let existing = try storedItem(lookupID: lookupID, service: service, account: account) else { return false }
            _ = try archive(existing, because: .delete, keepHistory: true)
        }
        guard let deleted = try store.delete(lookupID: lookupID) else { return false }
        try recordManifestRemoval(lookupID: lookupID, serviceTag: deleted.serviceTag, nonce: deleted.nonce)
        // The row deleted must be the one verified (its term is what the bucket loses).
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        return true
    }

    /// Deletes every item of `service`; with `keepHistory`, each one's last record is kept
    /// as a version first.
    func deleteAll(service: String, keepHistory: Bool = true) throws(VaultError) -> Int {
        try Self.validate(service: service)
        try flushPendingInserts()
        try ensureManifestVerified(bucket: nil)
        if keepHistory {
            return try deleteAllKeepingHistory(serviceTag: keys.serviceTag(service: service))
        }
        return try store.deleteAll(serviceTag: keys.serviceTag(service: service)) { (lookupID, serviceTag, nonce) throws(VaultError) in
            try recordManifestRemoval(lookupID: lookupID, serviceTag: serviceTag, nonce: nonce)
        }
    }
}

extension UnlockedVault {
    /// ``deleteAll(service:keepHistory:)`` keeping each item as a version: the rows are
    /// read (and their records opened) first, then each is archived and deleted.
    private func deleteAllKeepingHistory(serviceTag: [UInt8]) throws(VaultError) -> Int {
        var rows: [StoredRow] = []
        try store.forEachRow(serviceTag: serviceTag) { (row) throws(VaultError) in rows.append(row) }
        for row in rows {
            guard case .record(let opened) = try openScannedRow(row), opened.3.archive == nil else {
                throw .tampered(reason: .recordNotOfService)
            }
            _ = try archive(StoredItem(opened, serviceTag: row.serviceTag, nonce: row.nonce), because: .delete, keepHistory: true)
            guard let deleted = try store.delete(lookupID: row.lookupID) else { throw .corrupted(reason: .unexpectedStorageError) }
            try recordManifestRemoval(lookupID: row.lookupID, serviceTag: deleted.serviceTag, nonce: deleted.nonce)
            try ensureManifestVerified(bucket: Manifest.bucket(of: row.lookupID))
        }
        return rows.count
    }
}
