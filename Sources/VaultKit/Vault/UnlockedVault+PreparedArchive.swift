#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UnlockedVault {
    /// What a prepared `set` that keeps the item it writes over adds to the one round trip
    /// (docs/FORMAT.md section 14): the kept version's row, the trimmed version's, and
    /// what the storage must find under the lock for them to be right.
    struct PreparedArchive {
        /// The settings row the retention was read from (its nonce; `nil`: no row).
        var settings: (lookupID: [UInt8], nonce: [UInt8]?)
        /// The kept version inserted (its id must be free); `nil`: none kept (retention 0).
        var version: SealedItem?
        /// The kept version deleted by the retention (it must hold this nonce).
        var trimmed: StoredRow?
        /// An unnumbered item's history tag, under which no row may be: its first version.
        var noVersionsOf: [UInt8]?
        /// The number the item's new record takes.
        var nextNumber: UInt64
    }

    /// How a prepared `set` keeps `existing` (the record it writes over) as a version, as
    /// ``archive(_:because:keepHistory:)`` would; `nil` when that cannot be prepared from
    /// what is cached (the retention, or the nonce of the version to trim): the `set` then
    /// runs as any other, which reads them.
    ///
    /// Nothing here is trusted unchecked: the storage commits only where the settings row,
    /// the trimmed row and the absence of the new version's row (and of any version of an
    /// unnumbered item) are as prepared, and their buckets' digests are the ones used.
    func preparedArchive(of existing: OpenedRecord, service: String, account: String) -> PreparedArchive? {
        guard let retention = manifestCheck.verified.retention, retention.lookupID == keys.settingsLookupID else { return nil }
        let (item, plaintext, range, provenance) = existing
        var archive = PreparedArchive(settings: (retention.lookupID, retention.nonce), nextNumber: provenance.nextNumberWithoutArchive)
        guard retention.value > 0 else { return archive }
        let historyTag = keys.historyTag(service: service, account: account)
        let number: UInt64
        if provenance.number > 0 {
            number = provenance.number
            let keep = UInt64(retention.value)
            if number > keep {
                let trimmedID = keys.versionLookupID(service: service, account: account, number: number - keep)
                guard let nonce = manifestCheck.verified.versionNonce(trimmedID) else { return nil }
                archive.trimmed = StoredRow(lookupID: trimmedID, serviceTag: historyTag, nonce: nonce, sealed: [])
            }
        } else {
            // Unnumbered: version 1, if no version is kept (else its number needs a scan).
            number = 1
            archive.noVersionsOf = historyTag
        }
        var kept = provenance
        kept.number = number
        kept.archive = .init(date: Date(), writer: writer, because: .set)
        archive.version = seal(item, secret: SecretBytes(record: plaintext, range: range), provenance: kept,
                               lookupID: keys.versionLookupID(service: service, account: account, number: number), serviceTag: historyTag)
        archive.nextNumber = number + 1
        return archive
    }
}
