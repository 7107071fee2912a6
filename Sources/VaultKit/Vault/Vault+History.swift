#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Item history: the versions an overwrite or a delete keeps (docs/FORMAT.md section 14),
/// reading them, restoring one, purging them, and the vault's log of changes.
///
/// ```swift
/// try vault.set("bad", service: "db.example.com", account: "app")   // a mistaken rotation
/// let previous = try vault.history(service: "db.example.com", account: "app")[1]
/// try vault.restore(service: "db.example.com", account: "app", version: previous.number)
/// ```
extension Vault {
    /// The largest retention ``setHistoryRetention(_:)-9p7x7`` accepts.
    public static let maximumHistoryRetention = UnlockedVault.maximumHistoryRetention

    /// The versions of one item: the current item first (when it exists; a deleted
    /// item has kept versions only), then the kept versions, newest first.
    ///
    /// Like ``items(service:)-2s6j6``, it checks the whole manifest first (O(n) once, then again
    /// only after another process writes), so a version deleted or moved behind
    /// VaultKit's back throws ``VaultError/tampered(reason:)`` rather than going missing.
    ///
    /// - Returns: an empty array when the item has neither a current record nor a kept version.
    public func history(service: String, account: String) throws(VaultError) -> [VaultItemVersion] {
        try withUnlocked { (vault) throws(VaultError) in try vault.history(service: service, account: account) }
    }

    /// One version of an item with its secret: a kept version, or the current item when
    /// `version` is its number (``VaultItemVersion/number``).
    ///
    /// - Throws: ``VaultError/versionNotFound`` when the item has no such version (never
    ///   written, trimmed by the retention, or purged); ``VaultError/tampered(reason:)``.
    public func itemWithSecret(service: String, account: String, version: UInt64) throws(VaultError) -> (item: VaultItem, secret: SecretBytes) {
        try withUnlocked { (vault) throws(VaultError) in
            let (item, secret) = try vault.version(service: service, account: account, number: version)
            return (item, secret)
        }
    }

    /// Makes kept version `version` the current item again, in one transaction: the
    /// current item (if any) is kept as a version first, as an overwrite would keep it,
    /// and the restored content becomes the current item under a new number, written by
    /// ``VaultChange/Operation/restore`` (its label and generic data are the version's).
    ///
    /// - Throws: ``VaultError/versionNotFound`` when there is no such kept version.
    public func restore(service: String, account: String, version: UInt64) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in
                try vault.restore(service: service, account: account, number: version)
            }
        }
    }

    /// Deletes every kept version of one item (the current item stays), for a secret that
    /// must go for good. What this does not erase (database pages, the write-ahead log,
    /// backups, PostgreSQL's dead rows) is in docs/THREAT-MODEL.md, "Purged history".
    ///
    /// - Returns: how many versions were deleted.
    @discardableResult
    public func purgeHistory(service: String, account: String) throws(VaultError) -> Int {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in try vault.purgeHistory(service: service, account: account) }
        }
    }

    /// Deletes every kept version of every item, in one transaction (see
    /// ``purgeHistory(service:account:)-6ukhj``). O(n): every row is opened to find them.
    ///
    /// - Returns: how many versions were deleted.
    @discardableResult
    public func purgeHistory() throws(VaultError) -> Int {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in try vault.purgeAllHistory() }
        }
    }

    /// The vault's changes, newest first: every write its records still tell of (each
    /// current item's and each kept version's), and every delete a kept version records.
    ///
    /// Read from the sealed records, so it needs the key and holds what the vault holds:
    /// versions trimmed by the retention or purged, and writes with `keepHistory: false`
    /// before the last one, are gone from it. O(n) with the whole manifest checked.
    ///
    /// - Parameter limit: at most this many of the newest changes; `nil` for all.
    public func changes(limit: Int? = nil) throws(VaultError) -> [VaultChange] {
        try withUnlocked { (vault) throws(VaultError) in try vault.changes(limit: limit) }
    }

    /// How many earlier versions each item keeps: the vault's setting, or 10 when it was
    /// never set (KeePassXC's default; docs/FORMAT.md section 14 says why).
    public func historyRetention() throws(VaultError) -> Int {
        try withUnlocked { (vault) throws(VaultError) in try vault.historyRetention() }
    }

    /// Sets how many earlier versions each item keeps (0: none), for every writer of the
    /// vault (it is stored sealed in the vault), and trims every item's kept versions to
    /// it in the same transaction. O(n).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` (``VaultError/Reason/historyRetentionOutOfRange``)
    ///   outside 0 through ``maximumHistoryRetention``.
    public func setHistoryRetention(_ versions: Int) throws(VaultError) {
        try withUnlocked { (vault) throws(VaultError) in
            try vault.writeTransaction { (vault) throws(VaultError) in try vault.setHistoryRetention(versions) }
        }
    }
}
