/// Reading items: a row found by name or by scan, its record opened and checked to
/// belong there, under a verified manifest.
extension UnlockedVault {
    /// The names a row was looked up by: its lookup id is their keyed hash.
    typealias Names = (service: String, account: String)

    /// An opened record: the attributes, the decrypted record (for callers that need the
    /// secret), the secret's range in it, and what the record says of its writing.
    typealias OpenedRecord = (VaultItem, SecureBuffer, Range<Int>, RecordProvenance)

    /// Opens the record stored in `row`'s place and checks it belongs there.
    ///
    /// - Parameters:
    ///   - expected: the names the row was found by, when the caller looked it up by
    ///     name; `nil` for rows read by scanning (any kind but settings).
    ///   - version: the kept version's number the row was found by (`expected` given);
    ///     `nil` for the item itself.
    func openRecord(lookupID: [UInt8], expected: Names?, version: UInt64? = nil, nonce: UnsafeRawBufferPointer, sealed: UnsafeRawBufferPointer) throws(VaultError) -> OpenedRecord {
        try Self.openRecord(keys: keys, lookupID: lookupID, expected: expected, version: version, nonce: nonce, sealed: sealed)
    }

    /// ``openRecord(lookupID:expected:version:nonce:sealed:)`` with explicit keys, so the Benchmarks package
    /// can time exactly this code without a database (see `BenchmarkSupport.swift`).
    static func openRecord(keys: KeyHierarchy, lookupID: [UInt8], expected: Names?, version: UInt64? = nil, nonce: UnsafeRawBufferPointer, sealed: UnsafeRawBufferPointer) throws(VaultError) -> OpenedRecord {
        guard let plaintext = SecretBox.open(sealed: sealed, nonce: nonce, key: keys.sealingKey) else {
            throw .tampered(reason: .itemFailedAuthentication)
        }
        let (item, secretRange, provenance) = try plaintext.withBytes { (bytes) throws(VaultError) in try ItemRecord.decode(bytes) }
        // Binding (docs/FORMAT.md sections 5 and 14): a valid record moved to another row,
        // or to a row of another kind, is still rejected.
        // A row found by name has lookupID = H(expected names), so the record belongs
        // there exactly when it holds those names, byte for byte (not Swift's Unicode
        // equivalence, under which different bytes, and so different rows, compare
        // equal), and is of the kind (and version) looked for. That saves re-hashing on
        // every read; a scanned row has no expected names, so its lookup id is recomputed
        // from the record's, by its kind.
        let belongs = if let expected {
            ItemRecord.sameUTF8(item.service, expected.service) && ItemRecord.sameUTF8(item.account, expected.account)
                && (provenance.archive == nil ? version == nil : version == provenance.number)
        } else if provenance.archive == nil {
            keys.isLookupID(lookupID, service: item.service, account: item.account)
        } else {
            keys.isVersionLookupID(lookupID, service: item.service, account: item.account, number: provenance.number)
        }
        guard belongs else {
            throw .tampered(reason: .recordNotOfRow)
        }
        return (item, plaintext, secretRange, provenance)
    }

    /// Opens the record of a row read by ``VaultStorage/forEachRow(serviceTag:_:)``.
    func openRecord(_ row: StoredRow) throws(VaultError) -> OpenedRecord {
        let result = row.nonce.withUnsafeBytes { nonce in
            row.sealed.withUnsafeBytes { sealed in
                Result { () throws(VaultError) in try openRecord(lookupID: row.lookupID, expected: nil, nonce: nonce, sealed: sealed) }
            }
        }
        return try result.get()
    }

    /// What a scanned row holds, by its kind (docs/FORMAT.md section 14).
    enum ScannedRow {
        /// An item (no archive in the provenance) or a kept version of one.
        case record(OpenedRecord)
        case settings(SettingsRecord)
    }

    /// Opens any row read by a scan and checks it belongs in its place: its lookup id and
    /// service tag recomputed for its kind.
    func openScannedRow(_ row: StoredRow) throws(VaultError) -> ScannedRow {
        let opened = row.nonce.withUnsafeBytes { nonce in
            row.sealed.withUnsafeBytes { sealed in SecretBox.open(sealed: sealed, nonce: nonce, key: keys.sealingKey) }
        }
        guard let plaintext = opened else { throw .tampered(reason: .itemFailedAuthentication) }
        if try plaintext.withBytes({ (bytes) throws(VaultError) in try ItemRecord.kind(of: bytes) }) == .settings {
            guard row.lookupID == keys.settingsLookupID, row.serviceTag == keys.settingsTag else {
                throw .tampered(reason: .recordNotOfRow)
            }
            return .settings(try plaintext.withBytes { (bytes) throws(VaultError) in try SettingsRecord(decoding: bytes) })
        }
        let (item, range, provenance) = try plaintext.withBytes { (bytes) throws(VaultError) in try ItemRecord.decode(bytes) }
        let (idBelongs, tagBelongs) = if provenance.archive == nil {
            (keys.isLookupID(row.lookupID, service: item.service, account: item.account),
             keys.isServiceTag(row.serviceTag, service: item.service))
        } else {
            (keys.isVersionLookupID(row.lookupID, service: item.service, account: item.account, number: provenance.number),
             keys.isHistoryTag(row.serviceTag, service: item.service, account: item.account))
        }
        guard idBelongs else { throw .tampered(reason: .recordNotOfRow) }
        guard tagBelongs else { throw .tampered(reason: .recordNotOfService) }
        return .record((item, plaintext, range, provenance))
    }

    /// Reads one item, following a re-key by another process once if authentication fails.
    ///
    /// When this process has verified the item's manifest bucket, the read is one
    /// statement, accepted if it read the verified snapshot version (no other connection
    /// committed since). Otherwise the root is verified and the item read in one read
    /// transaction: with the bucket's rows, unless the root shows the bucket unchanged
    /// and the storage vouches for the row as it does for a lone read.
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
                if manifestCheck.coversLoneRead(bucket: bucket) {
                    lookup = try readRow(lookupID, service: service, account: account, onlyIfVerified: true, body)
                }
                if case .unverified = lookup {
                    lookup = try store.readTransaction { () throws(VaultError) in
                        // The row, asked for now, travels with the snapshot's first statement.
                        try store.prefetchItem(lookupID: lookupID)
                        try ensureManifestVerified(bucket: bucket, carriedSuffices: true)
                        let found = try readRow(lookupID, service: service, account: account, onlyIfVerified: true, body)
                        guard case .unverified = found else { return found }
                        // The storage did not vouch for the row of a carried bucket: the
                        // bucket is verified from its rows, in this snapshot, and read again.
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
            let (item, plaintext, range, _) = try openRecord(lookupID: lookupID, expected: (service, account), nonce: nonce, sealed: sealed)
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
                        // Every row is checked; kept versions and the settings are not items.
                        if case .record(let (item, _, _, provenance)) = try openScannedRow(row), provenance.archive == nil {
                            items.append(item)
                        }
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
}
