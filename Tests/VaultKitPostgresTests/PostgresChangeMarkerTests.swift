import Foundation
import StorageConformance
import Testing
import TestTraits
import TestSupport
import VaultKit
@testable import VaultKitPostgres

/// The change marker (docs/FORMAT.md section 13.1): which manifest buckets changed since
/// a process last verified is an index range over `vaultkit_manifest_changes`, keyed by the
/// vault's generation. The marker is a hint: the keyed sum stays the proof.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresChangeMarkerTests {
    static let accounts = TestServer.readerAccounts


    /// How many digest rows the vault has: what a full read of the buckets reads.
    static func digestRows(_ location: PostgresVaultLocation) throws -> Int {
        try TestServer.attacker().query("SELECT count(*) FROM vaultkit_manifest WHERE vault = $1", [.text(location.vaultName)]) { Int($0.int64(0, 0)) }
    }

    /// A reader's `get` of an item it verified, after another process's `set` of another
    /// item: the lone read, then the read transaction's first round trip (BEGIN, the
    /// snapshot with the header row, the item row, and the buckets changed since the
    /// reader's mark). The root shows the item's bucket unchanged, and the row is the
    /// version the reader verified, so the bucket's rows are not read: two (three before
    /// the root was checked first, four before the item row rode with the first
    /// statement, six before the header row and the changed buckets did).
    /// The fewest over several accounts counts: one in about 500 shares the writer's bucket.
    @Test func aGetAfterAnotherProcesssSetIsTwoRoundTrips() throws {
        let (reader, storage, writer, _) = try TestServer.verifiedReader()
        for account in Self.accounts { _ = try reader.string(service: "s", account: account) }
        var counts: [Int] = []
        for (round, account) in Self.accounts.dropFirst().prefix(8).enumerated() {
            try writer.set("w\(round)", service: "s", account: "a0")
            let before = storage.connection.roundTrips
            #expect(try reader.string(service: "s", account: account) == "v-" + account)
            counts.append(storage.connection.roundTrips - before)
        }
        #expect(counts.min()! <= 2, "\(counts)")
    }

    /// A reader's own `set`, rebuilt under the lock after another process's `set`, leaves
    /// nothing verified for reads (it checked only what the `set` builds on), so its next
    /// `get` goes straight to a read transaction: the root shows the item's bucket
    /// unchanged, and the row read with the first statement is the one kept, so that is
    /// all: one round trip (two before the root was checked first: the bucket's rows).
    @Test func aGetAfterOwnRebuiltSetIsOneRoundTrip() throws {
        let (writer, _, location, key) = try TestServer.countedVault()
        try writer.batch { batch in
            for account in Self.accounts { try batch.set("v-" + account, service: "s", account: account) }
        }
        // Each bucket verified by a read, and its rows kept to prepare `set`s from.
        let (reader, storage) = try TestServer.counted(location, key: key)
        for account in Self.accounts { _ = try reader.string(service: "s", account: account) }
        var counts: [Int] = []
        for round in 0..<4 {
            try writer.set("w\(round)", service: "s", account: "a0")
            try reader.set("r\(round)", service: "s", account: "a1", keepHistory: false)
            let account = Self.accounts[2 + round]
            let before = storage.connection.roundTrips
            #expect(try reader.string(service: "s", account: account) == "v-" + account)
            counts.append(storage.connection.roundTrips - before)
        }
        #expect(counts.min()! <= 1, "\(counts)")
    }

    /// Every commit marks the buckets it changed with its generation, in the marker's
    /// table; a reader then reads only those buckets' rows (and the one it verifies).
    @Test func aCommitMarksItsBucketsWithItsGeneration() throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        #expect(storage.changeMarkers)
        let name = PostgresConnection.Parameter.text(location.vaultName)
        let attacker = try TestServer.attacker()
        // The batch's generation marks every bucket it wrote.
        let marked = try attacker.query("SELECT count(*), max(changed) FROM vaultkit_manifest_changes WHERE vault = $1", [name]) {
            (Int($0.int64(0, 0)), $0.int64(0, 1))
        }
        #expect(marked.0 == (try Self.digestRows(location)))
        try writer.set("changed", service: "s", account: "a0")
        let generation = try attacker.query("SELECT generation FROM vaultkit_header WHERE vault = $1", [name]) { $0.int64(0, 0) }
        let newest = try attacker.query("SELECT count(*) FROM vaultkit_manifest_changes WHERE vault = $1 AND changed = $2", [name, .int64(generation)]) {
            $0.int64(0, 0)
        }
        #expect(newest >= 1)
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        #expect(storage.manifestRowsRead - rowsBefore <= 3)
    }

    enum WritePath: CaseIterable, Sendable {
        /// A lone `set` (prepared, one round trip).
        case preparedSet
        /// A batch's `set`s (the lock path, gathered inserts) keeping versions.
        case batch
        /// `update` keeping a version, `delete` and `deleteAll(service:)`.
        case updateAndDeletes
        /// A rekey: every row re-sealed, every digest rewritten.
        case rekey
    }

    /// Every path that writes digests marks them: after each, another reader lists only
    /// the buckets it changed (a path that marked nothing would make it read every bucket).
    @Test(arguments: WritePath.allCases)
    func everyWritePathMarksItsBuckets(_ path: WritePath) throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        try writer.set("t1", service: "t", account: "x")
        try writer.set("t2", service: "t", account: "y")
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        let rowsBefore = storage.manifestRowsRead
        switch path {
        case .preparedSet:
            try writer.set("t1'", service: "t", account: "x")
        case .batch:
            try writer.batch { batch in
                try batch.set("t1'", service: "t", account: "x")
                try batch.set("t3", service: "t", account: "z")
            }
        case .updateAndDeletes:
            try writer.update("t1'", service: "t", account: "x")
            _ = try writer.delete(service: "t", account: "y")
            _ = try writer.deleteAll(service: "t")
        case .rekey:
            try writer.rekey()
        }
        if path == .rekey {
            // Every digest changed, each marked with the rekey's generation; the reader
            // follows the new master key (and proves the root again from nothing).
            let name = PostgresConnection.Parameter.text(location.vaultName)
            let marked = try TestServer.attacker().query("""
                SELECT count(*) FROM vaultkit_manifest_changes c JOIN vaultkit_header h ON h.vault = c.vault
                WHERE c.vault = $1 AND c.changed = h.generation
                """, [name]) { Int($0.int64(0, 0)) }
            #expect(marked >= (try Self.digestRows(location)))
            #expect(try reader.string(service: "s", account: "a2") == "v-a2")
        } else {
            #expect(try reader.string(service: "s", account: "a2") == "v-a2")
            #expect(storage.manifestRowsRead - rowsBefore <= 8)
            #expect(try reader.verify() >= Self.accounts.count)
        }
    }

    enum OwnWrites: CaseIterable, Sendable {
        /// Lone `set`s keeping versions (each reads its bucket, then commits prepared).
        case loneSets
        /// `update`s, each a write transaction of its own (the lock path).
        case updates
    }

    /// A process's own commits move its mark on with its proven digests: after 30 of its
    /// own writes and one by another process, its next check lists the other's bucket
    /// (and the one it verifies), not its own 30 again. Before, the mark stayed at the
    /// last read, the list grew with every own write, and on a busy vault each read cost
    /// about 2 ms on the server (Benchmarks/README.md, "PostgreSQL under load").
    @Test(arguments: OwnWrites.allCases)
    func ownWritesMoveTheMarkOn(_ writes: OwnWrites) throws {
        let (reader, storage, writer, _) = try TestServer.verifiedReader()
        for (round, account) in Self.accounts.prefix(30).enumerated() {
            switch writes {
            case .loneSets: try reader.set("own\(round)", service: "s", account: account)
            case .updates: try reader.update("own\(round)", service: "s", account: account)
            }
        }
        #expect(try reader.string(service: "s", account: "a35") == "v-a35")
        try writer.set("other", service: "t", account: "x")
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a36") == "v-a36")
        #expect(storage.manifestRowsRead - rowsBefore <= 3)
        #expect(try reader.string(service: "s", account: "a0") == "own0")
        #expect(try reader.verify() >= Self.accounts.count)
    }

    /// A bucket emptied (its digest row deleted) keeps its marker, so the reader lists it
    /// as now empty and moves its proven digests on without reading every bucket.
    @Test func anEmptiedBucketIsListed() throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        _ = try writer.delete(service: "s", account: "a0")
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        #expect(storage.manifestRowsRead - rowsBefore < (try Self.digestRows(location)))
        #expect(throws: VaultError.itemNotFound) { try reader.string(service: "s", account: "a0") }
        #expect(try reader.verify() == Self.accounts.count - 1)
    }

    enum HintAttack: CaseIterable, Sendable {
        /// Every marker of the vault lowered to 0: the writer's change is hidden.
        case lowered
        /// Every marker of the vault deleted.
        case deleted
        /// Every marker raised far above any generation.
        case raised
        /// Markers inserted for every bucket, and for bucket numbers no vault has.
        case inserted

        /// Edits the markers of vault `name` as this attack does, as the DBA `attacker`.
        func edit(_ name: PostgresConnection.Parameter, as attacker: PostgresConnection) throws {
            switch self {
            case .lowered: _ = try attacker.change("UPDATE vaultkit_manifest_changes SET changed = 0 WHERE vault = $1", [name])
            case .deleted: _ = try attacker.change("DELETE FROM vaultkit_manifest_changes WHERE vault = $1", [name])
            case .raised: _ = try attacker.change("UPDATE vaultkit_manifest_changes SET changed = 1000000000000 WHERE vault = $1", [name])
            case .inserted:
                _ = try attacker.change("""
                    INSERT INTO vaultkit_manifest_changes (vault, bucket, changed)
                    SELECT $1, b, 1000000000000 FROM generate_series(-2, 1030) AS b
                    ON CONFLICT (vault, bucket) DO UPDATE SET changed = EXCLUDED.changed
                    """, [name])
            }
        }
    }

    /// A DBA who edits the markers after another process's commit: the reader still
    /// returns the right secret (reading every bucket when the hint hid a change), and a
    /// digest the DBA changed and hid from the hint is still `tampered`.
    @Test(arguments: HintAttack.allCases)
    func aHintEditedByTheDBANeverPassesAWrongRoot(_ attack: HintAttack) throws {
        let (reader, storage, writer, location) = try TestServer.verifiedReader()
        try writer.set("changed", service: "s", account: "a0")
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        func edit() throws { try attack.edit(name, as: attacker) }
        try edit()
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a0") == "changed")
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        if attack == .lowered || attack == .deleted {
            // The hidden change made the sum differ: every bucket was read.
            #expect(storage.manifestRowsRead - rowsBefore >= (try Self.digestRows(location)))
        }
        // A digest changed by the DBA, its marker hidden (or made up) the same way.
        try writer.set("again", service: "s", account: "a0")
        _ = try attacker.change(
            "UPDATE vaultkit_manifest SET digest = $2 WHERE vault = $1 AND bucket = (SELECT max(bucket) FROM vaultkit_manifest WHERE vault = $1)",
            [name, .bytes((0..<32).map { _ in UInt8.random(in: 1...255) })])
        try edit()
        let error = try #require(throws: VaultError.self) { try reader.string(service: "s", account: "a1") }
        #expect(error.code == .tampered)
    }

    /// A writer of an earlier release writes digests without markers: a reader of this
    /// release misses the change in the hint, its sum differs, and it reads every bucket:
    /// the right secrets, and the next reads are cheap again.
    @Test func aWriterWithoutMarkersIsReadCorrectly() throws {
        let (reader, storage, location, key) = try TestServer.countedVault()
        try reader.batch { batch in
            for account in Self.accounts { try batch.set("v-" + account, service: "s", account: account) }
        }
        try reader.verify()
        let (older, olderStorage) = try TestServer.counted(location, key: key)
        olderStorage.changeMarkers = false
        try older.set("older", service: "s", account: "a0")
        try older.set("older too", service: "s", account: "a2")
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a0") == "older")
        #expect(try reader.string(service: "s", account: "a2") == "older too")
        #expect(storage.manifestRowsRead - rowsBefore >= (try Self.digestRows(location)))
        #expect(try reader.verify() == Self.accounts.count)
    }

    /// A vault whose tables were made by an earlier release (no marker table): the next
    /// opener that may create tables adds it, and both kinds of host go on using the vault.
    @Test func aVaultOfTheEarlierLayoutGetsTheMarkerWhenOpened() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        let administrator = try TestServer.attacker()
        try administrator.execute("DROP TABLE \(schema).vaultkit_manifest_changes")
        let (vault, storage) = try TestServer.counted(location, key: key)
        #expect(storage.changeMarkers)
        #expect(try vault.string(service: "s", account: "a") == "x")
        try vault.set("y", service: "s", account: "b")
        let marked = try administrator.query("SELECT count(*) FROM \(schema).vaultkit_manifest_changes") { $0.int64(0, 0) }
        #expect(marked >= 1)
        #expect(try Vault.open(postgres: location, key: key).verify() == 2)
    }

    /// A role that may not create tables opens a vault of the earlier layout: it lists
    /// changed buckets by row versions (`xmin`), as before, and reads and writes correctly
    /// beside a host that may.
    @Test func aRoleWithoutCreateFallsBackToRowVersions() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        let creator = try Vault.create(postgres: location, key: key)
        try creator.batch { batch in
            for account in Self.accounts { try batch.set("v-" + account, service: "s", account: account) }
        }
        let administrator = try TestServer.attacker()
        try administrator.execute("DROP TABLE \(schema).vaultkit_manifest_changes")
        try administrator.execute("REVOKE CREATE ON SCHEMA \(schema) FROM CURRENT_USER")
        defer { try? administrator.execute("GRANT CREATE ON SCHEMA \(schema) TO CURRENT_USER") }
        let (reader, storage) = try TestServer.counted(location, key: key)
        #expect(!storage.changeMarkers)
        try reader.verify()
        let writer = try Vault.open(postgres: location, key: key)
        try writer.set("changed", service: "s", account: "a0")
        let rowsBefore = storage.manifestRowsRead
        #expect(try reader.string(service: "s", account: "a1") == "v-a1")
        #expect(storage.manifestRowsRead - rowsBefore <= 3)
        #expect(try reader.string(service: "s", account: "a0") == "changed")
        #expect(try reader.verify() == Self.accounts.count)
    }

    /// A role that may read the markers but not write them (another role created the
    /// table) keeps to row versions, and its writes succeed.
    @Test func aRoleThatMayNotWriteTheMarkersKeepsToRowVersions() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        let administrator = try TestServer.attacker()
        try administrator.execute("REVOKE INSERT, UPDATE ON \(schema).vaultkit_manifest_changes FROM CURRENT_USER")
        defer { try? administrator.execute("GRANT INSERT, UPDATE ON \(schema).vaultkit_manifest_changes TO CURRENT_USER") }
        let (vault, storage) = try TestServer.counted(location, key: key)
        #expect(!storage.changeMarkers)
        try vault.set("y", service: "s", account: "b")
        try vault.batch { batch in try batch.set("z", service: "s", account: "c") }
        #expect(try Vault.open(postgres: location, key: key).verify() == 3)
    }

    /// The schema check takes the marker's table whole or not at all: an extra column, a
    /// column of another type, or the index missing is refused as any other change is.
    @Test(arguments: [
        "ALTER TABLE vaultkit_manifest_changes ADD COLUMN extra int",
        "ALTER TABLE vaultkit_manifest_changes ALTER COLUMN changed TYPE numeric",
        "DROP INDEX vaultkit_manifest_changes_by_generation",
        "ALTER TABLE vaultkit_manifest_changes DROP COLUMN changed",
    ])
    func aMarkerTableOfAnotherShapeIsRefused(_ change: String) throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        let administrator = try TestServer.attacker()
        try administrator.execute("SET search_path = \(schema); " + change)
        #expect(throws: VaultError.tampered(reason: .schemaChanged)) { try Vault.open(postgres: location, key: key) }
    }
}
