import VaultKit

/// Item history (docs/FORMAT.md section 14) on every engine: versions are rows, so what
/// holds for rows (the manifest, binding, re-key) holds for them through the same seam.
extension StorageConformance {
    static func aBadOverwriteIsRestored(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("good", service: "db", account: "app", label: "Database")
        try vault.set("bad", service: "db", account: "app")
        let history = try vault.history(service: "db", account: "app")
        try check(history.map(\.number) == [2, 1], "current then the kept version, newest first")
        try check(history[0].isCurrent && !history[1].isCurrent, "only the first is current")
        try check(history[1].archivedBecause == .set && history[1].secretSize == 4, "kept because overwritten")
        try check(try vault.itemWithSecret(service: "db", account: "app", version: 1).secret.string() == "good", "version 1 read")
        try check(try vault.itemWithSecret(service: "db", account: "app", version: 2).secret.string() == "bad", "current read by number")
        try expect(.versionNotFound) { _ = try vault.itemWithSecret(service: "db", account: "app", version: 7) }
        try vault.restore(service: "db", account: "app", version: 1)
        try check(try vault.string(service: "db", account: "app") == "good", "restored")
        try check(try vault.item(service: "db", account: "app").label == "Database", "the version's label restored")
        let after = try fixture.reopen().history(service: "db", account: "app")
        try check(after.map(\.number) == [3, 2, 1], "the restore is a new version, the bad one kept")
        try check(after[0].operation == .restore && after[1].archivedBecause == .restore, "recorded as a restore")
        try expect(.versionNotFound) { try vault.restore(service: "db", account: "app", version: 9) }
        try check(try vault.items().count == 1 && vault.verify() == 1, "versions are not items")
    }

    static func aDeleteAllIsRestored(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("k1", service: "api", account: "a")
        try vault.set("k2", service: "api", account: "b")
        try vault.set("k2b", service: "api", account: "b")
        try check(try vault.deleteAll(service: "api") == 2, "both deleted")
        try check(try vault.items().isEmpty, "no item left")
        let kept = try vault.history(service: "api", account: "b")
        try check(kept.map(\.number) == [2, 1] && kept[0].archivedBecause == .delete, "the deleted item's versions")
        try vault.restore(service: "api", account: "b", version: 2)
        try vault.restore(service: "api", account: "a", version: 1)
        try check(try vault.string(service: "api", account: "b") == "k2b" && vault.string(service: "api", account: "a") == "k1", "restored")
        try check(try vault.history(service: "api", account: "b").map(\.number) == [3, 2, 1], "numbered after the kept versions")
        // A later set of a deleted item goes on after its highest kept number.
        try check(try vault.delete(service: "api", account: "a"), "deleted again")
        try vault.set("k1-new", service: "api", account: "a")
        try vault.set("k1-newer", service: "api", account: "a")
        try check(try vault.history(service: "api", account: "a").map(\.number) == [4, 3, 2, 1], "numbers go on")
        try check(try fixture.reopen().verify() == 2, "verifies")
    }

    static func retentionTrimsTheOldestVersions(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try check(try vault.historyRetention() == 10, "the default retention")
        try vault.setHistoryRetention(2)
        for n in 1...5 { try vault.set("v\(n)", service: "s", account: "a") }
        try check(try vault.history(service: "s", account: "a").map(\.number) == [5, 4, 3], "two versions kept")
        try expect(.versionNotFound) { _ = try vault.itemWithSecret(service: "s", account: "a", version: 2) }
        try check(try fixture.rows().count == 4, "the item, two versions and the settings")
        // Another writer reads the vault's retention.
        let other = try fixture.reopen()
        try check(try other.historyRetention() == 2, "the retention is the vault's")
        try other.set("v6", service: "s", account: "a")
        try check(try vault.history(service: "s", account: "a").map(\.number) == [6, 5, 4], "the other writer trims too")
        // Lowering it trims at once; 0 keeps none.
        try vault.setHistoryRetention(1)
        try check(try vault.history(service: "s", account: "a").map(\.number) == [6, 5], "lowered: trimmed at once")
        try vault.setHistoryRetention(0)
        try vault.set("v7", service: "s", account: "a")
        try check(try vault.delete(service: "s", account: "a"), "deleted")
        try check(try vault.history(service: "s", account: "a").isEmpty, "retention 0 keeps nothing")
        try expect(.invalidArgument(.historyRetentionOutOfRange)) { try vault.setHistoryRetention(-1) }
        try expect(.invalidArgument(.historyRetentionOutOfRange)) { try vault.setHistoryRetention(Vault.maximumHistoryRetention + 1) }
        try check(try fixture.reopen().verify() == 0, "verifies")
    }

    static func keepHistoryFalseKeepsNoVersion(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("t1", service: "oauth", account: "a", keepHistory: false)
        try vault.set("t2", service: "oauth", account: "a", keepHistory: false)
        try vault.update("t3", service: "oauth", account: "a", keepHistory: false)
        try check(try vault.history(service: "oauth", account: "a").count == 1, "only the current")
        try vault.batch { batch in try batch.set("t4", service: "oauth", account: "a", keepHistory: false) }
        try check(try vault.delete(service: "oauth", account: "a", keepHistory: false), "deleted")
        try check(try vault.history(service: "oauth", account: "a").isEmpty, "nothing kept")
        try check(try fixture.rows().isEmpty, "no row at all")
        try vault.set("k", service: "oauth", account: "b")
        try check(try vault.deleteAll(service: "oauth", keepHistory: false) == 1, "deleteAll")
        try check(try fixture.rows().isEmpty, "deleteAll kept nothing")
    }

    static func historySurvivesRekeyAndKeyChange(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.setHistoryRetention(3)
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "a")
        try check(try vault.delete(service: "s", account: "b") == false, "nothing to delete")
        try vault.rekey()
        try check(try vault.history(service: "s", account: "a").map(\.number) == [2, 1], "history after rekey")
        try check(try vault.itemWithSecret(service: "s", account: "a", version: 1).secret.string() == "one", "version after rekey")
        try vault.changeKey(to: VaultKey.random())
        try vault.set("three", service: "s", account: "a")
        try check(try vault.historyRetention() == 3, "the settings survive the rekey")
        try vault.restore(service: "s", account: "a", version: 1)
        try check(try vault.string(service: "s", account: "a") == "one", "restored after the key change")
        try check(try vault.history(service: "s", account: "a").map(\.number) == [4, 3, 2, 1], "three versions kept")
        try vault.set("four", service: "s", account: "a")
        try check(try vault.history(service: "s", account: "a").map(\.number) == [5, 4, 3, 2], "trimmed to three")
        try check(try vault.verify() == 1, "verifies")
    }

    /// A kept version deleted or put back behind the engine's back is the manifest's, as any row.
    static func versionRowsAreCoveredByTheManifest(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.setHistoryRetention(1)
        guard let settings = try fixture.rows().first else { throw ConformanceFailure("no settings row") }
        try vault.set("v1", service: "s", account: "a")
        let base = Set(try fixture.rows().map(\.lookupID))
        try vault.set("v2", service: "s", account: "a")
        guard let version1 = try fixture.rows().first(where: { !base.contains($0.lookupID) }) else { throw ConformanceFailure("no version row") }
        try vault.set("v3", service: "s", account: "a")
        guard let version2 = try fixture.rows().first(where: { !base.contains($0.lookupID) && $0.lookupID != version1.lookupID })
        else { throw ConformanceFailure("no version 2 row") }
        // Version 1 was trimmed; putting it back is a row the manifest does not have.
        try fixture.replace(version1)
        // A new opener (a handle that verified before may trust its scan until the header
        // moves on, as for `items()`: PostgreSQL's row versions, FORMAT.md section 13.1).
        try expect(rowsChanged) { _ = try fixture.reopen().history(service: "s", account: "a") }
        try expect(rowsChanged) { _ = try vault.verify() }
        try fixture.remove(version1.lookupID)
        try check(try vault.verify() == 1, "as it was")
        // Version 2 deleted.
        try fixture.remove(version2.lookupID)
        try expect(rowsChanged) { _ = try fixture.reopen().history(service: "s", account: "a") }
        try fixture.replace(version2)
        try check(try fixture.reopen().history(service: "s", account: "a").map(\.number) == [3, 2], "as it was")
        // The settings row: an older retention put back, or deleted.
        try vault.setHistoryRetention(5)
        try fixture.replace(settings)
        try expect(rowsChanged) { _ = try fixture.reopen().historyRetention() }
        try fixture.remove(settings.lookupID)
        try expect(rowsChanged) { try fixture.reopen().set("v4", service: "s", account: "a") }
    }

    /// A version's record moved to another item, another number, or into the item's own
    /// row (the kind swapped) does not belong there: `tampered`, whatever the manifest says.
    static func versionsMovedOrSwappedAreRejected(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try vault.set("a1", service: "s", account: "a")
        try vault.set("b1", service: "s", account: "b")
        let items = try fixture.rows()
        try vault.set("a2", service: "s", account: "a")
        try vault.set("a3", service: "s", account: "a")
        try vault.set("b2", service: "s", account: "b")
        let itemIDs = Set(items.map(\.lookupID))
        let all = try fixture.rows()
        let versions = all.filter { !itemIDs.contains($0.lookupID) }
        try check(versions.count == 3, "three versions")
        func tamperedAfter(_ change: () throws -> Void, _ what: String) throws {
            try change()
            do {
                _ = try fixture.reopen().verify()
                throw ConformanceFailure("\(what): verify passed")
            } catch let error as VaultError {
                try check(error.code == .tampered, "\(what): \(error)")
            }
            for row in try fixture.rows() where !all.contains(where: { $0.lookupID == row.lookupID }) { try fixture.remove(row.lookupID) }
            for row in all { try fixture.replace(row) }
            try check(try fixture.reopen().verify() == 2, "\(what): put right again")
        }
        // One version's sealed record in another version's row (another item's, or the same
        // item's other number), and a version's record in its item's row.
        for (index, other) in versions.enumerated() {
            let moved = versions[(index + 1) % versions.count]
            try tamperedAfter({ try fixture.replace(StoredRow(lookupID: other.lookupID, serviceTag: other.serviceTag, nonce: moved.nonce, sealed: moved.sealed)) },
                              "version moved to another row")
        }
        for item in items {
            try tamperedAfter({ try fixture.replace(StoredRow(lookupID: item.lookupID, serviceTag: item.serviceTag, nonce: versions[0].nonce, sealed: versions[0].sealed)) },
                              "a version's record in an item's row")
            try tamperedAfter({ try fixture.replace(StoredRow(lookupID: versions[0].lookupID, serviceTag: versions[0].serviceTag, nonce: item.nonce, sealed: item.sealed)) },
                              "an item's record in a version's row")
        }
    }

    static func writersAndChangesAreRecorded(_ fixture: Fixture) throws {
        let vault = fixture.vault
        try check(try vault.writer().contains("@"), "user@machine by default")
        try vault.declareWriter("rotation-job")
        try vault.add("a1", service: "s", account: "a")
        try vault.declareWriter("alice@laptop")
        try vault.update("a2", service: "s", account: "a")
        try check(try vault.delete(service: "s", account: "a"), "deleted")
        let history = try vault.history(service: "s", account: "a")
        try check(history.map(\.writer) == ["alice@laptop", "rotation-job"], "who wrote each version")
        try check(history.map(\.archivedBy) == ["alice@laptop", "alice@laptop"], "who replaced or deleted each")
        let changes = try vault.changes()
        try check(changes.map(\.operation) == [.delete, .update, .add], "newest first")
        try check(changes.map(\.writer) == ["alice@laptop", "alice@laptop", "rotation-job"], "writers in the log")
        try check(changes.map(\.version) == [2, 2, 1], "versions in the log")
        try check(try vault.changes(limit: 1).map(\.operation) == [.delete], "limited")
        try expect(.invalidArgument(.invalidWriterName)) { try vault.declareWriter("") }
        try expect(.invalidArgument(.invalidWriterName)) { try vault.declareWriter("a\nb") }
    }
}
