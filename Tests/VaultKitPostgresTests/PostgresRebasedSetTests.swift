import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A prepared `set` refused because another process wrote the vault since is rebuilt on
/// the state found under the lock (`UnlockedVault.commitRebased`): two round trips under
/// the lock instead of a write transaction. What that saves, and that it never writes on a
/// state a write transaction would not (a re-key, a tag or change marker the DBA edited, a
/// header put back; another writer in the same bucket: `PostgresRebasedBucketTests`).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresRebasedSetTests {
    /// The manifest bucket of a lookup id (docs/FORMAT.md section 6: its first 10 bits).
    static func bucket(_ lookupID: [UInt8]) -> Int { (Int(lookupID[0]) << 2) | (Int(lookupID[1]) >> 6) }

    /// Sets accounts `a0`, `a1`, ... of service `s` through `vault` until two of them share a
    /// bucket (about 40 by the birthday bound), or (`sharingABucket` false) two that do not;
    /// returns those two.
    static func accounts(in vault: Vault, _ location: PostgresVaultLocation, sharingABucket: Bool) throws -> (String, String) {
        let attacker = try TestServer.attacker()
        var accountOf: [[UInt8]: String] = [:]
        for index in 0..<500 {
            let account = "a\(index)"
            try vault.set("v", service: "s", account: account)
            let all = try attacker.query("SELECT lookup_id FROM vaultkit_items WHERE vault = $1", [.text(location.vaultName)]) { rows in
                Set((0..<rows.count).map { rows.array($0, 0) })
            }
            guard let new = all.subtracting(accountOf.keys).first else { throw VaultError.itemNotFound }
            let match = accountOf.first { (bucket($0.key) == bucket(new)) == sharingABucket }
            if let match { return (match.value, account) }
            accountOf[new] = account
        }
        throw VaultError.itemNotFound
    }

    /// Two handles on one vault, each counting its round trips.
    static func twoWriters() throws -> (a: Vault, aStorage: PostgresVaultStorage, b: Vault, bStorage: PostgresVaultStorage, location: PostgresVaultLocation, key: VaultKey) {
        let (a, aStorage, location, key) = try TestServer.countedVault()
        let (b, bStorage) = try TestServer.counted(location, key: key)
        return (a, aStorage, b, bStorage, location, key)
    }

    /// `a` and `b` set `first` and `second` by turns, three times each, without history.
    static func takeTurns(_ a: Vault, _ first: String, _ b: Vault, _ second: String) throws {
        for round in 0..<3 {
            try a.set("turn \(round)", service: "s", account: first, keepHistory: false)
            try b.set("turn \(round)", service: "s", account: second, keepHistory: false)
        }
    }

    /// Two handles take turns writing items in different buckets: every `set` meets the
    /// other's commit, and is rebuilt under the lock. Two round trips each (the lock with
    /// the header and changed buckets, the rows with `COMMIT`; the refused offer is no
    /// longer made once the other is seen writing), and no write transaction: before, each
    /// took a write transaction, 12 to 15 round trips in all. (Without history: a version
    /// the other keeps lands in a bucket at random, now and then the `set`'s own.)
    @Test func writersTakingTurnsRebaseInTwoRoundTrips() throws {
        let (a, aStorage, b, bStorage, location, key) = try Self.twoWriters()
        let (first, second) = try Self.accounts(in: a, location, sharingABucket: false)
        try Self.takeTurns(a, first, b, second)
        let transactions = (aStorage.writeTransactionsBegun, bStorage.writeTransactionsBegun)
        var counts: [Int] = []
        for round in 0..<20 {
            for (vault, storage, account) in [(a, aStorage, first), (b, bStorage, second)] {
                let before = storage.connection.roundTrips
                try vault.set("value \(round)", service: "s", account: account, keepHistory: false)
                counts.append(storage.connection.roundTrips - before)
            }
        }
        #expect(counts == Array(repeating: 2, count: 40))
        #expect(aStorage.writeTransactionsBegun == transactions.0)
        #expect(bStorage.writeTransactionsBegun == transactions.1)
        #expect(try a.string(service: "s", account: second) == "value 19")
        #expect(try b.string(service: "s", account: first) == "value 19")
        #expect(try Vault.open(postgres: location, key: key).verify() >= 2)
    }

    /// Once the other handle stops writing, the first `set` under the lock finds nothing
    /// changed, and the next are offered in one round trip again.
    @Test func aLoneWriterAgainIsBackToOneRoundTrip() throws {
        let (a, aStorage, b, _, location, _) = try Self.twoWriters()
        let (first, second) = try Self.accounts(in: a, location, sharingABucket: false)
        try Self.takeTurns(a, first, b, second)
        var counts: [Int] = []
        for round in 0..<6 {
            let before = aStorage.connection.roundTrips
            try a.set("alone \(round)", service: "s", account: first, keepHistory: false)
            counts.append(aStorage.connection.roundTrips - before)
        }
        #expect(counts == [2, 2, 1, 1, 1, 1])
        #expect(try b.string(service: "s", account: first) == "alone 5")
    }

    /// Another handle re-keys: the header the lock finds is not the one the set was
    /// prepared under (nor does its tag verify under the old keys), so the `set` follows
    /// the re-key in a write transaction.
    @Test func aRekeyInBetweenFallsBack() throws {
        let (a, aStorage, b, _, location, key) = try Self.twoWriters()
        try a.set("one", service: "s", account: "a")
        try a.set("two", service: "s", account: "a")
        try b.rekey()
        let transactions = aStorage.writeTransactionsBegun
        try a.set("three", service: "s", account: "a")
        #expect(aStorage.writeTransactionsBegun == transactions + 1)
        #expect(try b.string(service: "s", account: "a") == "three")
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// The DBA replaces the manifest tag while another process writes: the locked header
    /// does not verify, nothing is rebuilt on it, and the write transaction that follows
    /// reports the tampering. Nothing is written.
    @Test func aTagTheDBAEditedIsNeverWrittenOn() throws {
        let (a, _, b, _, location, _) = try Self.twoWriters()
        try a.set("one", service: "s", account: "a")
        try a.set("two", service: "s", account: "a")
        try b.set("other", service: "s", account: "b")
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        let stored = { () throws -> [[UInt8]] in
            try attacker.query("SELECT nonce FROM vaultkit_items WHERE vault = $1 ORDER BY lookup_id", [name]) { rows in
                (0..<rows.count).map { rows.array($0, 0) }
            }
        }
        _ = try attacker.change("UPDATE vaultkit_header SET manifest_tag = $2 WHERE vault = $1",
                                [name, .bytes((0..<32).map { _ in UInt8.random(in: 0...255) })])
        let rows = try stored()
        let error = try #require(throws: VaultError.self) { try a.set("three", service: "s", account: "a") }
        #expect(error.code == .tampered)
        #expect(try stored() == rows)
    }

    /// The DBA edits the change markers after another process's commit (lowered, deleted,
    /// raised, made up). The listing is only a hint: one that hides the change does not
    /// sum to the root and the `set` falls back; one that adds buckets lists their stored
    /// digests and changes nothing. Either way every value is right and the manifest is
    /// exact. A digest the DBA changed as well, its marker edited the same way, is
    /// `tampered`, and nothing is written on it.
    @Test(arguments: PostgresChangeMarkerTests.HintAttack.allCases)
    func aHintEditedByTheDBANeverRebasesOnAWrongRoot(_ attack: PostgresChangeMarkerTests.HintAttack) throws {
        let (a, _, b, _, location, key) = try Self.twoWriters()
        let (mine, theirs) = try Self.accounts(in: a, location, sharingABucket: false)
        try a.set("mine", service: "s", account: mine)
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        func edit() throws { try attack.edit(name, as: attacker) }
        try b.set("theirs", service: "s", account: theirs)
        try edit()
        try a.set("mine again", service: "s", account: mine)
        #expect(try b.string(service: "s", account: mine) == "mine again")
        #expect(try a.string(service: "s", account: theirs) == "theirs")
        #expect(try Vault.open(postgres: location, key: key).verify() >= 2)

        // A digest changed by the DBA (not of the set's bucket), its marker hidden or made up.
        try b.set("theirs again", service: "s", account: theirs)
        _ = try attacker.change(
            "UPDATE vaultkit_manifest SET digest = $2 WHERE vault = $1 AND bucket = (SELECT max(bucket) FROM vaultkit_manifest WHERE vault = $1)",
            [name, .bytes((0..<32).map { _ in UInt8.random(in: 1...255) })])
        try edit()
        let generation = { () throws -> Int64 in
            try attacker.query("SELECT generation FROM vaultkit_header WHERE vault = $1", [name]) { $0.int64(0, 0) }
        }
        let before = try generation()
        let error = try #require(throws: VaultError.self) { try a.set("mine, on a tampered root", service: "s", account: mine) }
        #expect(error.code == .tampered)
        #expect(try generation() == before)
    }

    /// The header and every row put back to a state another process on this host wrote
    /// and then wrote past, with generation still above the one the `set` was prepared
    /// on: everything a rebuild checks holds but the rollback record, which says
    /// `rolledBack` before anything is written on it (writing would fork the history).
    @Test func aStatePutBackBehindTheRecordIsRolledBackNotRebased() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        let (a, aStorage) = try TestServer.counted(location, key: key)
        let (b, _) = try TestServer.counted(location, key: key)
        let hostGuard = PostgresRollbackGuardTests.guardDirectory("host")
        try a.useRollbackGuard(hostGuard)
        try b.useRollbackGuard(hostGuard)
        try a.set("one", service: "s", account: "a")
        try a.set("two", service: "s", account: "a")
        try b.set("b1", service: "s", account: "b")
        let tables = PostgresRollbackGuardTests.tables + ["vaultkit_manifest_changes"]
        let attacker = try TestServer.attacker()
        for table in tables { try attacker.execute("CREATE TABLE \(schema).kept_\(table) AS SELECT * FROM \(schema).\(table)") }
        try b.set("b2", service: "s", account: "b")
        try attacker.execute("BEGIN")
        for table in tables.reversed() { try attacker.execute("DELETE FROM \(schema).\(table)") }
        for table in tables { try attacker.execute("INSERT INTO \(schema).\(table) SELECT * FROM \(schema).kept_\(table)") }
        try attacker.execute("COMMIT")
        let transactions = aStorage.writeTransactionsBegun
        let error = try #require(throws: VaultError.self) { try a.set("three", service: "s", account: "a") }
        #expect(error.code == .rolledBack)
        // Refused by the rebuild itself, not by a write transaction after it.
        #expect(aStorage.writeTransactionsBegun == transactions)
        let generation = try attacker.query("SELECT generation FROM \(schema).vaultkit_header WHERE vault = $1", [.text(location.vaultName)]) {
            $0.int64(0, 0)
        }
        let kept = try attacker.query("SELECT generation FROM \(schema).kept_vaultkit_header WHERE vault = $1", [.text(location.vaultName)]) {
            $0.int64(0, 0)
        }
        #expect(generation == kept)
    }
}
