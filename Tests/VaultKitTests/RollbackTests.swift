import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Beyond tampering with a record: deleting an item's row, putting back an older copy of
/// a row (or of a deleted one), or of the manifest itself, is detected by the next read
/// of what changed, by any listing, and by `verify()` (docs/THREAT-MODEL.md).
@Suite(.offCooperativePool) struct RollbackTests {
    static let rowsChanged = VaultError.tampered(reason: .rowsChanged)

    /// One row of `vault_items`, hex-encoded: lookup_id, service_tag, nonce, sealed.
    typealias Row = [String]

    static func rows(_ path: String) -> [Row] {
        RawDatabase(path).rows("SELECT lookup_id, service_tag, nonce, sealed FROM vault_items")
    }

    static func row(_ path: String, lookupID: String) throws -> Row {
        try #require(rows(path).first { $0[0] == lookupID })
    }

    static func put(_ row: Row, in path: String) {
        RawDatabase(path).execute("INSERT OR REPLACE INTO vault_items VALUES (x'\(row[0])', x'\(row[1])', x'\(row[2])', x'\(row[3])')")
    }

    /// Runs `write` and returns the lookup id of the one row it added.
    static func newRow(in path: String, _ write: () throws -> Void) throws -> String {
        let before = Set(rows(path).map { $0[0] })
        try write()
        let added = Set(rows(path).map { $0[0] }).subtracting(before)
        try #require(added.count == 1)
        return added.first!
    }

    /// A key vault with 50 items in 5 services, plus ("target", "alice"); returns its row.
    static func populated(_ label: String = #function) throws -> (Vault, String, VaultKey, String) {
        let (vault, path, key) = try Fixtures.keyVault(label)
        try vault.batch { batch in
            for index in 0..<50 { try batch.set("v\(index)", service: "s\(index % 5)", account: "a\(index)") }
        }
        let target = try newRow(in: path) { try vault.set("v1", service: "target", account: "alice") }
        return (vault, path, key, target)
    }

    @Test func aDeletedRowIsDetectedByItsReadsAndEveryListing() throws {
        let (vault, path, key, target) = try Self.populated()
        vault.close()
        RawDatabase(path).execute("DELETE FROM vault_items WHERE lookup_id = x'\(target)'")

        let reopened = try Vault.open(at: path, key: key)
        // Not "item not found": the vault says the item should be there.
        #expect(throws: Self.rowsChanged) { try reopened.secret(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.contains(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.items() }
        // Even a listing of another service: the deleted row could have been one of its own.
        #expect(throws: Self.rowsChanged) { try reopened.items(service: "s1") }
        #expect(throws: Self.rowsChanged) { try reopened.verify() }
        // Writes refuse to build on it: re-adding the item would hide the deletion.
        #expect(throws: Self.rowsChanged) { try reopened.set("v2", service: "target", account: "alice") }
        // Items in untouched buckets still read: a read checks only its own bucket.
        var readable = 0
        for index in 0..<50 where (try? reopened.string(service: "s\(index % 5)", account: "a\(index)")) == "v\(index)" { readable += 1 }
        #expect(readable > 40)
    }

    @Test func anOlderVersionOfARowPutBackIsDetected() throws {
        let (vault, path, key, target) = try Self.populated()
        let version1 = try Self.row(path, lookupID: target)
        try vault.set("v2", service: "target", account: "alice")
        vault.close()
        Self.put(version1, in: path)

        let reopened = try Vault.open(at: path, key: key)
        #expect(throws: Self.rowsChanged) { try reopened.string(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.item(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.verify() }
        #expect(throws: Self.rowsChanged) { try reopened.delete(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.rekey() }
    }

    @Test func aDeletedItemPutBackIsDetected() throws {
        let (vault, path, key, target) = try Self.populated()
        let saved = try Self.row(path, lookupID: target)
        try vault.delete(service: "target", account: "alice")
        vault.close()
        Self.put(saved, in: path)

        let reopened = try Vault.open(at: path, key: key)
        #expect(throws: Self.rowsChanged) { try reopened.string(service: "target", account: "alice") }
        #expect(throws: Self.rowsChanged) { try reopened.items(service: "target") }
    }

    /// Rolling back the row *and* its manifest bucket leaves the root, in the header,
    /// disagreeing; rolling back the root too needs its tag, which only the key makes.
    @Test func anOlderRowWithItsOlderManifestIsDetectedByTheRoot() throws {
        let (vault, path, key, target) = try Self.populated()
        let version1 = try Self.row(path, lookupID: target)
        let buckets = RawDatabase(path).rows("SELECT bucket, digest FROM vault_manifest")
        try vault.set("v2", service: "target", account: "alice")
        vault.close()
        Self.put(version1, in: path)
        let database = RawDatabase(path)
        database.execute("DELETE FROM vault_manifest")
        for bucket in buckets {
            // RawDatabase.rows hex-encodes an integer's decimal text: decode it back.
            let digits = stride(from: 0, to: bucket[0].count, by: 2).map { offset in
                let start = bucket[0].index(bucket[0].startIndex, offsetBy: offset)
                return Character(UnicodeScalar(UInt8(bucket[0][start..<bucket[0].index(start, offsetBy: 2)], radix: 16)!))
            }
            database.execute("INSERT INTO vault_manifest VALUES (\(String(digits)), x'\(bucket[1])')")
        }
        #expect(database.integer("SELECT count(*) FROM vault_manifest") == Int64(buckets.count))

        let reopened = try Vault.open(at: path, key: key)
        #expect(throws: VaultError.tampered(reason: .manifestBucketsMismatch)) {
            try reopened.string(service: "target", account: "alice")
        }
    }

    @Test func aReplacedOrForgedManifestRootIsDetected() throws {
        let (vault, path, key, _) = try Self.populated()
        let old = RawDatabase(path).rows("SELECT manifest_root, manifest_tag FROM vault_header")[0]
        let oldGeneration = try #require(RawDatabase(path).integer("SELECT generation FROM vault_generation"))
        try vault.set("other", service: "target", account: "bob")
        vault.close()

        // An older root with its valid tag (and the generation it covers): the buckets no
        // longer add up to it.
        RawDatabase(path).execute("""
            UPDATE vault_header SET manifest_root = x'\(old[0])', manifest_tag = x'\(old[1])';
            UPDATE vault_generation SET generation = \(oldGeneration);
            """)
        let reopened = try Vault.open(at: path, key: key)
        #expect(throws: VaultError.tampered(reason: .manifestBucketsMismatch)) { try reopened.verify() }
        reopened.close()

        // A root made up by the attacker (for example the XOR of observed roots) has no valid tag.
        RawDatabase(path).execute("UPDATE vault_header SET manifest_root = randomblob(32)")
        let again = try Vault.open(at: path, key: key)
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try again.string(service: "target", account: "alice")
        }
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) {
            try again.set("v3", service: "fresh", account: "carol")
        }
    }

    /// While a process has the vault open and has verified it, another connection
    /// deletes a row: SQLite's data_version tells the reader to check again.
    @Test func tamperingWhileTheVaultIsOpenIsDetectedOnTheNextRead() throws {
        let (vault, path, _, target) = try Self.populated()
        #expect(try vault.verify() == 51)
        #expect(try vault.string(service: "target", account: "alice") == "v1")
        RawDatabase(path).execute("DELETE FROM vault_items WHERE lookup_id = x'\(target)'")
        #expect(throws: Self.rowsChanged) { try vault.string(service: "target", account: "alice") }
    }

    /// The documented limit (docs/THREAT-MODEL.md): a whole older copy of the file is
    /// self-consistent, so nothing in the file can tell it from the current one.
    @Test func anOlderCopyOfTheWholeFileIsNotDetectable() throws {
        let (vault, path, key, _) = try Self.populated()
        vault.close()  // the last connection checkpoints the WAL into the file
        let copy = Fixtures.bytes(of: path)
        let current = try Vault.open(at: path, key: key)
        try current.set("v2", service: "target", account: "alice")
        current.close()
        Fixtures.write(copy, to: path)

        let restored = try Vault.open(at: path, key: key)
        #expect(try restored.string(service: "target", account: "alice") == "v1")
        #expect(try restored.verify() == 51)
    }

    static let trials = ProcessInfo.processInfo.environment["VAULTKIT_STRESS"] == "1" ? 500 : 40

    /// Random rollback attacks on copies of one vault with a history: each deletes rows,
    /// puts back older versions of rows, or resurrects deleted items (one to three at a
    /// time, mixed). Every one must be reported by `verify()`, and every attacked item
    /// that a read can name must fail to read.
    @Test func randomRollbackAttacksAreAllDetected() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        // Every version each row ever had, keyed by lookup id, and the item it belongs to.
        var history: [String: [Row]] = [:]
        var owner: [String: (service: String, account: String)] = [:]
        var live: Set<String> = []
        func snapshot() { for row in Self.rows(path) where history[row[0]]?.last != row { history[row[0], default: []].append(row) } }
        for round in 0..<120 {
            let account = "a\(Int.random(in: 0..<30))"
            if round % 5 == 4 {
                try vault.delete(service: "s", account: account)
                live.remove(account)
            } else {
                let before = Set(Self.rows(path).map { $0[0] })
                try vault.set("v\(round)", service: "s", account: account)
                // Only a new item's row is the item's: over an existing one, the row added is its kept version.
                if !live.contains(account) {
                    for added in Set(Self.rows(path).map { $0[0] }).subtracting(before) { owner[added] = ("s", account) }
                }
                live.insert(account)
            }
            snapshot()
        }
        vault.close()
        let original = Fixtures.bytes(of: path)
        let current = Dictionary(uniqueKeysWithValues: Self.rows(path).map { ($0[0], $0) })
        let rolledBackCandidates = history.filter { $0.value.count > 1 || current[$0.key] == nil }.map(\.key)
        try #require(!rolledBackCandidates.isEmpty && !current.isEmpty)

        var detected = 0
        for trial in 0..<Self.trials {
            let copy = Fixtures.vaultPath("rollback-\(trial)")
            Fixtures.write(original, to: copy)
            var attacked: Set<String> = []
            for _ in 0..<Int.random(in: 1...3) {
                switch Int.random(in: 0..<2) {
                case 0:  // delete a current row
                    let victim = current.keys.randomElement()!
                    RawDatabase(copy).execute("DELETE FROM vault_items WHERE lookup_id = x'\(victim)'")
                    attacked.insert(victim)
                default:  // put back an older version of a row, or a deleted item's last row
                    let victim = rolledBackCandidates.randomElement()!
                    let older = history[victim]!.filter { $0 != current[victim] }.randomElement()!
                    Self.put(older, in: copy)
                    attacked.insert(victim)
                }
            }
            let opened = try Vault.open(at: copy, key: key)
            do {
                _ = try opened.verify()
                Issue.record("trial \(trial): rollback of \(attacked.count) row(s) not detected")
            } catch {
                #expect(error == Self.rowsChanged, "trial \(trial)")
                detected += 1
            }
            if let victim = attacked.first, let names = owner[victim] {
                #expect(throws: Self.rowsChanged) { try opened.secret(service: names.service, account: names.account) }
            }
            opened.close()
            for suffix in ["", "-wal", "-shm"] { unlink(copy + suffix) }
        }
        #expect(detected == Self.trials)
        print("rollback attacks: \(detected) of \(Self.trials) detected (history of \(history.values.map(\.count).reduce(0, +)) row versions)")
    }

    /// Every kind of write, through several handles, batches that catch errors and go
    /// on, a passphrase change and a re-key: the manifest always matches the rows, here
    /// and for the independent reader of docs/FORMAT.md.
    @Test func everyWriteKeepsTheManifestExact() throws {
        let (first, path, key) = try Fixtures.keyVault()
        let second = try Vault.open(at: path, key: key)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let vault = round % 2 == 0 ? first : second
            let service = "s\(Int.random(in: 0..<3, using: &generator))"
            let account = "a\(Int.random(in: 0..<40, using: &generator))"
            switch Int.random(in: 0..<7, using: &generator) {
            case 0: try vault.set("v\(round)", service: service, account: account)
            case 1: _ = try? vault.add("v\(round)", service: service, account: account)
            case 2: _ = try? vault.update("v\(round)", service: service, account: account, label: "l\(round)")
            case 3: try vault.delete(service: service, account: account)
            case 4 where round % 50 == 4: try vault.deleteAll(service: service)
            case 5:
                try vault.batch { batch in
                    for offset in 0..<5 {
                        // Duplicates and missing items throw inside the batch, which goes on.
                        _ = try? batch.add("b\(round)", service: service, account: "a\(offset)")
                        _ = try? batch.update("u\(round)", service: service, account: "a\(offset + 20)")
                        try batch.set("x\(round)", service: service, account: "a\(offset + 30)")
                        try batch.delete(service: service, account: "a\(offset + 10)")
                    }
                }
            case 6 where round % 100 == 6: try vault.rekey()
            default: _ = try vault.items(service: service)
            }
        }
        try first.changePassphrase(to: "now a passphrase", kdf: testKDF)
        let count = try first.verify()
        #expect(try second.verify() == count)
        #expect(count == (try first.items()).count)
        first.close()
        second.close()

        let reopened = try Vault.open(at: path, passphrase: "now a passphrase")
        #expect(try reopened.verify() == count)
        if FormatTests.readerIsAvailable {
            let result = try ChildProcess.run("/usr/bin/env", ["python3", FormatTests.reader, path],
                                              environment: ChildProcess.cleanEnvironment(["VAULT_PASSPHRASE": "now a passphrase"]))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == count)
        }
    }
}
