#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Item history (docs/FORMAT.md section 14): an item written over or deleted is kept as
/// a version, an ordinary row of its own kind, so the manifest, `verify()`, re-key,
/// backups and both engines cover versions with no change to storage.
extension UnlockedVault {
    /// The default retention: as KeePassXC's (ten versions per entry), enough to undo a
    /// run of bad rotations while a vault of 100,000 items stays about ten times its size
    /// at most (and only for the items actually rewritten).
    static let defaultHistoryRetention = 10
    /// The largest retention accepted: a bound on what one item can make the vault hold.
    static let maximumHistoryRetention = 1_000

    /// A kept version found by its item's history tag, its record opened and bound to its row.
    struct KeptVersion {
        let row: StoredRow
        let opened: OpenedRecord
        var number: UInt64 { opened.3.number }
    }

    // MARK: Writing (inside a write transaction)

    /// Keeps `existing` (the item about to be written over or deleted) as a version when
    /// `keepHistory` and the retention allow, trimming the versions beyond the retention
    /// in the same transaction; returns the number the item's next record takes.
    ///
    /// A numbered item `n` is kept as version `n`, and version `n - R` is deleted: one row
    /// by its id, since versions are contiguous. An unnumbered one (new, or from before
    /// history) takes the number after its highest kept version, found by its history
    /// tag, and every version `R` or more below it goes.
    func archive(_ existing: StoredItem, because operation: VaultChange.Operation, keepHistory: Bool) throws(VaultError) -> UInt64 {
        guard keepHistory else { return existing.provenance.nextNumberWithoutArchive }
        let retention = UInt64(try historyRetentionInTransaction())
        guard retention > 0 else { return existing.provenance.nextNumberWithoutArchive }
        let (service, account) = (existing.item.service, existing.item.account)
        let number: UInt64
        if existing.provenance.number > 0 {
            number = existing.provenance.number
            if number > retention { try deleteVersion(service: service, account: account, number: number - retention) }
        } else {
            let kept = try keptVersions(service: service, account: account)
            number = (kept.map(\.number).max() ?? 0) + 1
            for version in kept where version.number + retention <= number { try deleteVersionRow(version.row) }
        }
        var provenance = existing.provenance
        provenance.number = number
        provenance.archive = .init(date: Date(), writer: writer, because: operation)
        let lookupID = keys.versionLookupID(service: service, account: account, number: number)
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        let sealed = seal(existing.item, secret: existing.secret, provenance: provenance,
                          lookupID: lookupID, serviceTag: keys.historyTag(service: service, account: account))
        guard try insertIfAbsent(sealed) else { throw .tampered(reason: .versionNumberInUse) }
        recordManifestAddition(sealed)
        sealed.nonce.withUnsafeBytes { manifestCheck.verified.rememberVersion(lookupID, nonce: Array($0)) }
        return number + 1
    }

    /// Deletes kept version `number` of an item, if it is there.
    private func deleteVersion(service: String, account: String, number: UInt64) throws(VaultError) {
        let lookupID = keys.versionLookupID(service: service, account: account, number: number)
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        manifestCheck.verified.forgetVersion(lookupID)
        guard let deleted = try store.delete(lookupID: lookupID) else { return }
        try recordManifestRemoval(lookupID: lookupID, serviceTag: deleted.serviceTag, nonce: deleted.nonce)
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
    }

    /// Deletes one row read by a scan, recording it for the manifest.
    func deleteVersionRow(_ row: StoredRow) throws(VaultError) {
        try ensureManifestVerified(bucket: Manifest.bucket(of: row.lookupID))
        manifestCheck.verified.forgetVersion(row.lookupID)
        guard let deleted = try store.delete(lookupID: row.lookupID) else { throw .corrupted(reason: .unexpectedStorageError) }
        try recordManifestRemoval(lookupID: row.lookupID, serviceTag: deleted.serviceTag, nonce: deleted.nonce)
        try ensureManifestVerified(bucket: Manifest.bucket(of: row.lookupID))
    }

    /// The kept versions of an item, through its history tag, each bound to its row.
    ///
    /// A writer may build on this without the whole manifest verified: a version hidden
    /// from the scan lowers at most the number taken next, and that version's row (whose
    /// bucket is verified before it is written) then shows the row missing or taken.
    func keptVersions(service: String, account: String) throws(VaultError) -> [KeptVersion] {
        var kept: [KeptVersion] = []
        try store.forEachRow(serviceTag: keys.historyTag(service: service, account: account)) { (row) throws(VaultError) in
            guard case .record(let opened) = try openScannedRow(row), opened.3.archive != nil,
                  ItemRecord.sameUTF8(opened.0.service, service), ItemRecord.sameUTF8(opened.0.account, account)
            else { throw .tampered(reason: .recordNotOfService) }
            kept.append(KeptVersion(row: row, opened: opened))
        }
        return kept
    }

    /// Restores kept version `number` as the current item (a new version, written by
    /// ``VaultChange/Operation/restore``); the current item, if any, is kept as a version.
    func restore(service: String, account: String, number: UInt64) throws(VaultError) {
        try Self.validate(service: service, account: account)
        try flushPendingInserts()
        let versionID = keys.versionLookupID(service: service, account: account, number: number)
        try ensureManifestVerified(bucket: Manifest.bucket(of: versionID))
        let version = try store.withSealedItem(lookupID: versionID) { (_, nonce, sealed) throws(VaultError) in
            try openRecord(lookupID: versionID, expected: (service, account), version: number, nonce: nonce, sealed: sealed)
        }
        guard let (restored, plaintext, range, _) = version else { throw .versionNotFound }
        let lookupID = keys.lookupID(service: service, account: account)
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        let existing = try storedItem(lookupID: lookupID, service: service, account: account)
        // The row read is kept as a version: it must be the one verified.
        if existing != nil { try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID)) }
        let next: UInt64 = if let existing {
            try archive(existing, because: .restore, keepHistory: true)
        } else {
            (try keptVersions(service: service, account: account).map(\.number).max() ?? number) + 1
        }
        var item = restored
        item.modified = Date()
        let sealed = seal(item, secret: SecretBytes(record: plaintext, range: range), provenance: provenance(number: next, .restore),
                          lookupID: lookupID, serviceTag: keys.serviceTag(service: service))
        try upsert(sealed)
        if let existing {
            try recordManifestRemoval(lookupID: lookupID, serviceTag: existing.serviceTag, nonce: existing.nonce)
        }
        recordManifestAddition(sealed)
    }

    /// Deletes every kept version of one item; returns how many.
    func purgeHistory(service: String, account: String) throws(VaultError) -> Int {
        try Self.validate(service: service, account: account)
        try flushPendingInserts()
        try ensureManifestVerified(bucket: nil)
        let kept = try keptVersions(service: service, account: account)
        for version in kept { try deleteVersionRow(version.row) }
        return kept.count
    }

    /// Deletes every kept version of every item; returns how many.
    func purgeAllHistory() throws(VaultError) -> Int {
        try flushPendingInserts()
        try ensureManifestVerified(bucket: nil)
        let versions = try allVersionRows()
        for row in versions { try deleteVersionRow(row) }
        return versions.count
    }

    /// Every row holding a kept version (each opened and checked), by scan.
    private func allVersionRows() throws(VaultError) -> [StoredRow] {
        var rows: [StoredRow] = []
        try store.forEachRow(serviceTag: nil) { (row) throws(VaultError) in
            if case .record(let opened) = try openScannedRow(row), opened.3.archive != nil { rows.append(row) }
        }
        return rows
    }

    // MARK: Settings

    /// The retention the vault's settings row holds, or the default without one; read in
    /// the transaction under way, its bucket verified.
    func historyRetentionInTransaction() throws(VaultError) -> Int {
        let lookupID = keys.settingsLookupID
        try ensureManifestVerified(bucket: Manifest.bucket(of: lookupID))
        let settings = try store.withSealedItem(lookupID: lookupID) { (tag, nonce, sealed) throws(VaultError) -> (SettingsRecord, [UInt8]) in
            guard let plaintext = SecretBox.open(sealed: sealed, nonce: nonce, key: keys.sealingKey) else {
                throw .tampered(reason: .itemFailedAuthentication)
            }
            guard Array(tag) == keys.settingsTag else { throw .tampered(reason: .recordNotOfService) }
            return (try plaintext.withBytes { (bytes) throws(VaultError) in try SettingsRecord(decoding: bytes) }, Array(nonce))
        }
        let retention = settings.map { Int($0.0.historyRetention) } ?? Self.defaultHistoryRetention
        // What a prepared `set` keeping a version builds on (checked under its lock).
        manifestCheck.verified.retention = (lookupID, settings?.1, retention)
        return retention
    }

    /// Stores `retention` in the settings row and trims every item's kept versions to it.
    func setHistoryRetention(_ retention: Int) throws(VaultError) {
        guard (0...Self.maximumHistoryRetention).contains(retention) else { throw .invalidArgument(.historyRetentionOutOfRange) }
        try flushPendingInserts()
        try ensureManifestVerified(bucket: nil)
        let sealed = Self.seal(SettingsRecord(historyRetention: UInt32(retention)), keys: keys)
        let replaced = try store.withSealedItem(lookupID: sealed.lookupID) { (tag, nonce, _) in (Array(tag), Array(nonce)) }
        try upsert(sealed)
        if let replaced { try recordManifestRemoval(lookupID: sealed.lookupID, serviceTag: replaced.0, nonce: replaced.1) }
        recordManifestAddition(sealed)
        sealed.nonce.withUnsafeBytes { manifestCheck.verified.retention = (sealed.lookupID, Array($0), retention) }
        // Each item keeps its `retention` highest versions.
        var byItem: [[UInt8]: [(number: UInt64, row: StoredRow)]] = [:]
        try store.forEachRow(serviceTag: nil) { (row) throws(VaultError) in
            guard case .record(let opened) = try openScannedRow(row), opened.3.archive != nil else { return }
            byItem[row.serviceTag, default: []].append((opened.3.number, row))
        }
        for versions in byItem.values {
            for version in versions.sorted(by: { $0.number > $1.number }).dropFirst(retention) { try deleteVersionRow(version.row) }
        }
    }

    // MARK: Reading

    /// The versions of one item, the current first (if it exists), then the kept ones
    /// newest first, under the whole manifest verified (a version deleted or hidden is
    /// `tampered`, not left out).
    mutating func history(service: String, account: String) throws(VaultError) -> [VaultItemVersion] {
        try Self.validate(service: service, account: account)
        return try followingRekey { (vault) throws(VaultError) in
            try vault.store.readTransaction { () throws(VaultError) in
                let kept = try vault.keptVersions(service: service, account: account)
                let lookupID = vault.keys.lookupID(service: service, account: account)
                let current = try vault.storedItem(lookupID: lookupID, service: service, account: account)
                try vault.ensureManifestVerified(bucket: nil)
                try vault.verifyAgain(buckets: Set(kept.map { Manifest.bucket(of: $0.row.lookupID) } + [Manifest.bucket(of: lookupID)]))
                let highest = kept.map(\.number).max() ?? 0
                var versions = kept.sorted { $0.number > $1.number }.map { Self.version($0.opened, number: $0.number) }
                if let current {
                    let opened = (current.item, current.plaintext, current.secretRange, current.provenance)
                    let number = current.provenance.number == 0 ? highest + 1 : current.provenance.number
                    versions.insert(Self.version(opened, number: number), at: 0)
                }
                return versions
            }
        }
    }

    /// Verifies `buckets` from their rows again in this read transaction, whatever this
    /// process verified before. History is what returns secrets that were replaced or
    /// purged, and a row put back without the header moving (a DBA's snapshot of a purged
    /// version) is not seen by a storage's version inside a transaction (PostgreSQL
    /// compares row versions in lone reads only), so each call checks the rows it returns
    /// against the digests the root proved: a bucket read per version listed.
    mutating func verifyAgain(buckets: Set<Int>) throws(VaultError) {
        for bucket in buckets.sorted() {
            manifestCheck.forget(bucket: bucket)
            try ensureManifestVerified(bucket: bucket)
        }
    }

    /// Kept version `number` of an item, or the current item when that is its number.
    mutating func version(service: String, account: String, number: UInt64) throws(VaultError) -> (VaultItem, SecretBytes) {
        try Self.validate(service: service, account: account)
        return try followingRekey { (vault) throws(VaultError) in
            try vault.store.readTransaction { () throws(VaultError) -> (VaultItem, SecretBytes) in
                let versionID = vault.keys.versionLookupID(service: service, account: account, number: number)
                try vault.verifyAgain(buckets: [Manifest.bucket(of: versionID)])
                let kept = try vault.store.withSealedItem(lookupID: versionID) { (_, nonce, sealed) throws(VaultError) in
                    try vault.openRecord(lookupID: versionID, expected: (service, account), version: number, nonce: nonce, sealed: sealed)
                }
                if let (item, plaintext, range, _) = kept { return (item, SecretBytes(record: plaintext, range: range)) }
                // The current item's number: its own, or (unnumbered) the one after the kept versions.
                let lookupID = vault.keys.lookupID(service: service, account: account)
                try vault.verifyAgain(buckets: [Manifest.bucket(of: lookupID)])
                guard let current = try vault.storedItem(lookupID: lookupID, service: service, account: account) else { throw .versionNotFound }
                var currentNumber = current.provenance.number
                if currentNumber == 0 {
                    try vault.ensureManifestVerified(bucket: nil)
                    currentNumber = (try vault.keptVersions(service: service, account: account).map(\.number).max() ?? 0) + 1
                }
                guard currentNumber == number else { throw .versionNotFound }
                return (current.item, current.secret)
            }
        }
    }

    /// The changes the vault's records tell of, newest first: each record's own write, and
    /// each delete a kept version records.
    mutating func changes(limit: Int?) throws(VaultError) -> [VaultChange] {
        try followingRekey { (vault) throws(VaultError) in
            try vault.store.readTransaction { () throws(VaultError) -> [VaultChange] in
                var records: [(item: VaultItem, provenance: RecordProvenance)] = []
                var highest: [[UInt8]: UInt64] = [:]
                try vault.store.forEachRow(serviceTag: nil) { (row) throws(VaultError) in
                    guard case .record(let (item, _, _, provenance)) = try vault.openScannedRow(row) else { return }
                    records.append((item, provenance))
                    if provenance.archive != nil {
                        // The history tag names the item.
                        highest[row.serviceTag] = max(highest[row.serviceTag] ?? 0, provenance.number)
                    }
                }
                try vault.ensureManifestVerified(bucket: nil)
                var changes: [VaultChange] = []
                for (item, provenance) in records {
                    var number = provenance.number
                    if number == 0 {
                        number = (highest[vault.keys.historyTag(service: item.service, account: item.account)] ?? 0) + 1
                    }
                    changes.append(VaultChange(date: item.modified, writer: provenance.writer, operation: provenance.operation,
                                               service: item.service, account: item.account, version: number))
                    if let archive = provenance.archive, archive.because == .delete {
                        changes.append(VaultChange(date: archive.date, writer: archive.writer, operation: .delete,
                                                   service: item.service, account: item.account, version: number))
                    }
                }
                // Newest first; a delete after the write of the version it archived.
                changes.sort { ($0.date, $0.version, $0.operation == .delete ? 1 : 0) > ($1.date, $1.version, $1.operation == .delete ? 1 : 0) }
                if let limit { return Array(changes.prefix(max(0, limit))) }
                return changes
            }
        }
    }

    /// The retention in force, read under the manifest.
    mutating func historyRetention() throws(VaultError) -> Int {
        try followingRekey { (vault) throws(VaultError) in
            try vault.store.readTransaction { () throws(VaultError) in try vault.historyRetentionInTransaction() }
        }
    }

    private static func version(_ opened: OpenedRecord, number: UInt64) -> VaultItemVersion {
        let (item, _, range, provenance) = opened
        return VaultItemVersion(
            number: number, item: item, writer: provenance.writer, operation: provenance.operation,
            archived: provenance.archive?.date, archivedBy: provenance.archive?.writer,
            archivedBecause: provenance.archive?.because, secretSize: range.count
        )
    }

    /// Runs a read again, once, under the new keys when it failed as `tampered` because
    /// another process re-keyed the vault (as ``list(service:)`` does).
    private mutating func followingRekey<Result>(_ body: (inout UnlockedVault) throws(VaultError) -> Result) throws(VaultError) -> Result {
        do {
            return try body(&self)
        } catch let error where error.code == .tampered || error.code == .versionNotFound {
            guard try refreshKeysIfRekeyed() else { throw error }
            return try body(&self)
        }
    }
}
