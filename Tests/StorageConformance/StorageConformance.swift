import VaultKit

/// The engine behaviour every ``VaultStorage`` must give, as checks shared by the test
/// targets of each engine: SQLite and in-memory (VaultKitTests) and PostgreSQL
/// (VaultKitPostgresTests) run the same bodies on their own fixtures.
///
/// A check that does not hold throws ``ConformanceFailure`` naming it, which fails the
/// calling test (no Testing import here, so this target links into any test target).
package enum StorageConformance {
    /// A vault unlocked by a raw key, and the hands of "another connection" on its rows.
    package struct Fixture {
        package let vault: Vault
        package let reopen: () throws -> Vault
        package let rows: () throws -> [StoredRow]
        /// Inserts or replaces a row as it is given (another connection's commit).
        package let replace: (StoredRow) throws -> Void
        package let remove: ([UInt8]) throws -> Void

        package init(vault: Vault, reopen: @escaping () throws -> Vault, rows: @escaping () throws -> [StoredRow],
                    replace: @escaping (StoredRow) throws -> Void, remove: @escaping ([UInt8]) throws -> Void) {
            self.vault = vault
            self.reopen = reopen
            self.rows = rows
            self.replace = replace
            self.remove = remove
        }
    }

    /// Every check, so that each engine's test target runs them all (a new check runs
    /// on every engine without touching their targets).
    package enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        case itemsAreSetReadListedAndDeleted
        case aRowPutBackBehindTheEnginesBackIsRejected
        case aRowDeletedBehindTheEnginesBackIsRejected
        case aFailedBatchLeavesNothingBehind
        case rekeyRunsThroughTheSeam
        case twoConnectionsSeeEachOthersCommits
        case hostWrapsAreAddedListedAndRemoved
        case aBadOverwriteIsRestored
        case aDeleteAllIsRestored
        case retentionTrimsTheOldestVersions
        case keepHistoryFalseKeepsNoVersion
        case historySurvivesRekeyAndKeyChange
        case versionRowsAreCoveredByTheManifest
        case versionsMovedOrSwappedAreRejected
        case writersAndChangesAreRecorded

        package var description: String { rawValue }

        package func run(_ fixture: Fixture) throws {
            switch self {
            case .itemsAreSetReadListedAndDeleted: try StorageConformance.itemsAreSetReadListedAndDeleted(fixture)
            case .aRowPutBackBehindTheEnginesBackIsRejected: try StorageConformance.aRowPutBackBehindTheEnginesBackIsRejected(fixture)
            case .aRowDeletedBehindTheEnginesBackIsRejected: try StorageConformance.aRowDeletedBehindTheEnginesBackIsRejected(fixture)
            case .aFailedBatchLeavesNothingBehind: try StorageConformance.aFailedBatchLeavesNothingBehind(fixture)
            case .rekeyRunsThroughTheSeam: try StorageConformance.rekeyRunsThroughTheSeam(fixture)
            case .twoConnectionsSeeEachOthersCommits: try StorageConformance.twoConnectionsSeeEachOthersCommits(fixture)
            case .hostWrapsAreAddedListedAndRemoved: try StorageConformance.hostWrapsAreAddedListedAndRemoved(fixture)
            case .aBadOverwriteIsRestored: try StorageConformance.aBadOverwriteIsRestored(fixture)
            case .aDeleteAllIsRestored: try StorageConformance.aDeleteAllIsRestored(fixture)
            case .retentionTrimsTheOldestVersions: try StorageConformance.retentionTrimsTheOldestVersions(fixture)
            case .keepHistoryFalseKeepsNoVersion: try StorageConformance.keepHistoryFalseKeepsNoVersion(fixture)
            case .historySurvivesRekeyAndKeyChange: try StorageConformance.historySurvivesRekeyAndKeyChange(fixture)
            case .versionRowsAreCoveredByTheManifest: try StorageConformance.versionRowsAreCoveredByTheManifest(fixture)
            case .versionsMovedOrSwappedAreRejected: try StorageConformance.versionsMovedOrSwappedAreRejected(fixture)
            case .writersAndChangesAreRecorded: try StorageConformance.writersAndChangesAreRecorded(fixture)
            }
        }
    }

    static let rowsChanged = VaultError.tampered(reason: .rowsChanged)

    /// Host key wraps live in the storage too (docs/FORMAT.md section 12): listed in UTF-8
    /// byte order of their names whatever the engine's collation, covered by the manifest
    /// tag, and the last one removed leaves an empty list, which the tag tells apart from
    /// "never had one".
    static func hostWrapsAreAddedListedAndRemoved(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("kept", service: "s", account: "a")
        try check(try vault.hosts().isEmpty, "no hosts at first")
        for name in ["b", "B", "a"] { try vault.addHost(HostKeyPair.generate().publicKey, name: name) }
        try check(try vault.hosts().map(\.name) == ["B", "a", "b"], "hosts in UTF-8 byte order")
        // The vault identity's row (name '') is stored with the wraps, but is no host.
        let identity = try vault.identity()
        let reopened = try fixture.reopen()
        try check(try reopened.hosts().map(\.name) == ["B", "a", "b"], "hosts read back by another opener")
        try check(try reopened.identity() == identity, "the identity read back by another opener")
        for name in ["a", "b", "B"] { try reopened.removeHost(name) }
        try check(try reopened.hosts().isEmpty, "every host removed")
        try check(try reopened.verify() == 1, "the vault verifies after the removals")
        let third = try fixture.reopen()
        try check(try third.string(service: "s", account: "a") == "kept", "items survive the removals' re-keys")
        try check(try third.hosts().isEmpty, "no host comes back")
        try check(try third.identity() == identity, "the identity survives the removals' re-keys")
    }

    static func itemsAreSetReadListedAndDeleted(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("one", service: "api.example.com", account: "alice")
        try vault.add("two", service: "api.example.com", account: "bob", label: "Bob")
        try vault.set("three", service: "db.example.com", account: "alice")
        try vault.update("one-b", service: "api.example.com", account: "alice")
        try check(try vault.string(service: "api.example.com", account: "alice") == "one-b", "updated value read back")
        try check(try vault.item(service: "api.example.com", account: "bob").label == "Bob", "label read back")
        try expect(.duplicateItem) { try vault.add("x", service: "api.example.com", account: "bob") }
        try check(try vault.items(service: "api.example.com").map(\.account) == ["alice", "bob"], "items of a service")
        try check(try vault.delete(service: "api.example.com", account: "bob"), "delete finds the item")
        try check(try !vault.delete(service: "api.example.com", account: "bob"), "second delete finds nothing")
        try expect(.itemNotFound) { _ = try vault.string(service: "api.example.com", account: "bob") }
        try check(try vault.deleteAll(service: "db.example.com") == 1, "deleteAll counts")
        try check(try vault.items().map(\.service) == ["api.example.com"], "what is left")
        try check(try vault.verify() == 1, "verify counts")
        // What was written is there for the next opener, through the same seam.
        let reopened = try fixture.reopen()
        try check(try reopened.string(service: "api.example.com", account: "alice") == "one-b", "reopened reads the write")
        // The item, and the versions its update, the delete and the deleteAll kept.
        try check(try fixture.rows().count == 4, "one item and three kept versions stored")
    }

    static func aRowPutBackBehindTheEnginesBackIsRejected(_ fixture: Fixture) throws {
        try fixture.vault.set("old", service: "s", account: "alice")
        guard let old = try fixture.rows().first else { throw ConformanceFailure("no row stored") }
        try fixture.vault.set("other", service: "s", account: "bob")
        try fixture.vault.set("new", service: "s", account: "alice")
        // Another connection restores one row's older version: self-consistent, and sealed
        // under the right keys, but no longer the manifest's.
        try fixture.replace(old)
        try expect(rowsChanged) { _ = try fixture.vault.string(service: "s", account: "alice") }
        try expect(rowsChanged) { _ = try fixture.vault.verify() }
    }

    static func aRowDeletedBehindTheEnginesBackIsRejected(_ fixture: Fixture) throws {
        try fixture.vault.set("a", service: "s", account: "alice")
        try fixture.vault.set("b", service: "s", account: "bob")
        guard let victim = try fixture.rows().first else { throw ConformanceFailure("no row stored") }
        try fixture.remove(victim.lookupID)
        try expect(rowsChanged) { _ = try fixture.vault.items() }
    }

    static func aFailedBatchLeavesNothingBehind(_ fixture: Fixture) throws {
        struct Abort: Error {}
        try fixture.vault.set("kept", service: "s", account: "alice")
        let before = Set(try fixture.rows().map(\.sealed))
        do {
            try fixture.vault.batch { batch in
                try batch.set("changed", service: "s", account: "alice")
                try batch.add("new", service: "s", account: "bob")
                _ = try batch.delete(service: "s", account: "alice")
                throw Abort()
            }
            throw ConformanceFailure("the aborted batch returned")
        } catch is Abort {}
        // A batch failing on the engine's own error rolls back too.
        try expect(.duplicateItem) {
            try fixture.vault.batch { batch in
                try batch.add("new", service: "s", account: "bob")
                try batch.add("again", service: "s", account: "bob")
            }
        }
        try check(Set(try fixture.rows().map(\.sealed)) == before, "rows as before the batches")
        try check(try fixture.vault.items().map(\.account) == ["alice"], "items as before")
        try check(try fixture.vault.string(service: "s", account: "alice") == "kept", "value as before")
        try check(try fixture.vault.verify() == 1, "verifies")
        // The manifest was not left half-applied: the next write builds on it.
        try fixture.vault.set("after", service: "s", account: "bob")
        try check(try fixture.reopen().verify() == 2, "next write builds on the manifest")
    }

    static func rekeyRunsThroughTheSeam(_ fixture: Fixture) throws {
        try fixture.vault.set("secret", service: "s", account: "alice")
        try fixture.vault.rekey()
        try check(try fixture.vault.string(service: "s", account: "alice") == "secret", "read after rekey")
        try check(try fixture.reopen().verify() == 1, "reopened after rekey")
    }

    /// Two connections on one vault: each sees the other's commits, an `add` of the same
    /// item by the second fails as a duplicate, and an `update` of a deleted one as not found.
    static func twoConnectionsSeeEachOthersCommits(_ fixture: Fixture) throws {
        let first = fixture.vault
        let second = try fixture.reopen()
        try first.add("a1", service: "s", account: "alice")
        try expect(.duplicateItem) { try second.add("a2", service: "s", account: "alice") }
        try second.set("a3", service: "s", account: "alice")
        try check(try first.string(service: "s", account: "alice") == "a3", "first sees second's set")
        try check(try first.delete(service: "s", account: "alice"), "first deletes")
        try expect(.itemNotFound) { try second.update("a4", service: "s", account: "alice") }
        try check(try second.verify() == 0, "second verifies the empty vault")
    }

    // MARK: Checks

    package static func check(_ condition: @autoclosure () throws -> Bool, _ what: String) throws {
        guard try condition() else { throw ConformanceFailure(what) }
    }

    package static func expect(_ expected: VaultError, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as VaultError {
            guard error == expected else { throw ConformanceFailure("expected \(expected), got \(error)") }
            return
        }
        throw ConformanceFailure("expected \(expected), nothing thrown")
    }
}

/// A conformance check that did not hold.
package struct ConformanceFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
