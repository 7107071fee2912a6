import Foundation
import StorageConformance
import Testing
import TestTraits
import TestSupport
import VaultKit
@testable import VaultKitPostgres

/// Reads that other tables' and other vaults' commits leave alone (``PostgresRowVersions``),
/// and what still makes a read verify again: this vault's header changing, or a row
/// changed, put back or deleted behind VaultKit's back without it (an administrator's SQL).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresRowVersionTests {
    /// A commit to another table or another vault leaves the version, and a read of a
    /// verified item stays one round trip; a change to this vault's header row, even one
    /// that writes the same values, changes it.
    @Test func onlyThisVaultsChangesMoveTheVersion() throws {
        let (vault, storage, location, _) = try TestServer.countedVault()
        try vault.set("one", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "one")
        let seen = storage.snapshotVersion
        let other = try TestServer.attacker()
        try other.execute("CREATE TABLE IF NOT EXISTS unrelated_commits (id bigserial PRIMARY KEY)")
        for _ in 0..<3 { _ = try other.change("INSERT INTO unrelated_commits DEFAULT VALUES", []) }
        try Vault.create(postgres: TestServer.location(), key: VaultKey.random()).set("x", service: "s", account: "a")
        let before = storage.connection.roundTrips
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.connection.roundTrips - before == 1)
        #expect(storage.snapshotVersion == seen)
        _ = try other.change("UPDATE vaultkit_header SET generation = generation WHERE vault = $1", [.text(location.vaultName)])
        try storage.readTransaction { () throws(StorageError) in try storage.pinSnapshot() }
        #expect(storage.snapshotVersion != seen)
    }

    /// After its own commit a writer reports the version a fresh read then sees; another
    /// writer's commit to the vault changes it.
    @Test func aWritersOwnCommitKeepsItsVersionUntilAnotherWriterCommits() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 1_000)
        try storage.writeTransaction { () throws(StorageError) in try storage.setFormatVersion(VaultHeader.currentFormatVersion) }
        let committed = storage.snapshotVersion
        try storage.readTransaction { () throws(StorageError) in try storage.pinSnapshot() }
        #expect(storage.snapshotVersion == committed)
        try Vault.open(postgres: location, key: key).set("x", service: "s", account: "a")
        try storage.readTransaction { () throws(StorageError) in try storage.pinSnapshot() }
        #expect(storage.snapshotVersion != committed)
    }

    /// The attacker edits item rows with SQL and leaves the header row alone (so the vault
    /// state is unchanged), amid unrelated commits: a reader that verified the items
    /// before is not fooled. A row put back (an older secret of the same item) and a row
    /// deleted are each caught by the next read of that item.
    @Test func rowsEditedWithoutTheHeaderAreCaughtByTheNextReadOfThem() throws {
        let fixture = try TestServer.fixture()
        let vault = fixture.vault
        try vault.set("old", service: "s", account: "alice")
        let old = try #require(try fixture.rows().first)
        try vault.set("new", service: "s", account: "alice")
        try vault.set("bob's", service: "s", account: "bob")
        let reader = try fixture.reopen()
        #expect(try reader.string(service: "s", account: "alice") == "new")
        #expect(try reader.string(service: "s", account: "bob") == "bob's")
        try fixture.replace(old)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try reader.string(service: "s", account: "alice") }

    }

    @Test func aRowDeletedWithoutTheHeaderIsCaughtByTheNextReadOfIt() throws {
        let fixture = try TestServer.fixture()
        try fixture.vault.set("alice's", service: "s", account: "alice")
        let alice = try #require(try fixture.rows().first)
        try fixture.vault.set("bob's", service: "s", account: "bob")
        let reader = try fixture.reopen()
        #expect(try reader.string(service: "s", account: "alice") == "alice's")
        #expect(try reader.string(service: "s", account: "bob") == "bob's")
        let bob = try #require(try fixture.rows().first { row in row.lookupID != alice.lookupID })
        try fixture.remove(bob.lookupID)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try reader.string(service: "s", account: "bob") }
    }

    /// A row added where the reader verified there was none (an item deleted by a
    /// writer, then its old row put back by the attacker) is caught by the next read.
    @Test func aDeletedRowPutBackIsCaughtByTheNextRead() throws {
        let fixture = try TestServer.fixture()
        let vault = fixture.vault
        try vault.set("kept", service: "s", account: "alice")
        try vault.set("gone", service: "s", account: "bob")
        let rowsBefore = try fixture.rows()
        #expect(try vault.delete(service: "s", account: "bob"))
        let remaining = try fixture.rows()
        let deleted = try #require(rowsBefore.first { row in !remaining.contains { $0.lookupID == row.lookupID } })
        let reader = try fixture.reopen()
        #expect(throws: VaultError.itemNotFound) { try reader.string(service: "s", account: "bob") }
        #expect(try reader.string(service: "s", account: "alice") == "kept")
        try fixture.replace(deleted)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try reader.string(service: "s", account: "bob") }
    }

    enum CarriedEdit: CaseIterable, Sendable {
        /// The item's older row put back over the current one.
        case putBack
        /// The item's row deleted.
        case deleted
        /// A deleted item's row put back where the reader verified there was none.
        case deletedPutBack
    }

    /// The same edits, met by a reader whose own `set` came after another process's
    /// commit (it was rebuilt on the new state, and what reads relied on is verified
    /// again): its next `get` goes straight to a read transaction, whose root shows the
    /// edited bucket unchanged (the attacker left the digests alone), so the reader would
    /// trust the row read with that transaction's first round trip. The row is confirmed
    /// against the row versions the reader holds instead, and the `get` is `tampered`.
    @Test(arguments: CarriedEdit.allCases)
    func anEditInABucketTheRootShowsUnchangedIsCaughtByTheNextGet(_ edit: CarriedEdit) throws {
        let (writer, _, location, key) = try TestServer.countedVault()
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        func rows() throws -> [(lookupID: [UInt8], serviceTag: [UInt8], nonce: [UInt8], sealed: [UInt8])] {
            try attacker.query("SELECT lookup_id, service_tag, nonce, sealed FROM vaultkit_items WHERE vault = $1", [name]) { rows in
                (0..<rows.count).map { (rows.array($0, 0), rows.array($0, 1), rows.array($0, 2), rows.array($0, 3)) }
            }
        }
        let bucket = { (lookupID: [UInt8]) in Int(lookupID[0]) << 2 | Int(lookupID[1]) >> 6 }
        try writer.set("old", service: "s", account: "alice")
        let old = try #require(try rows().first)
        // Items the writer and the reader change, none in alice's bucket.
        var others: [String] = []
        var used = [bucket(old.lookupID)]
        for account in (0..<4).map({ "x\($0)" }) {
            let known = Set(try rows().map(\.lookupID))
            try writer.set("x", service: "t", account: account)
            let added = try #require(try rows().first { !known.contains($0.lookupID) })
            if !used.contains(bucket(added.lookupID)) { others.append(account) }
            used.append(bucket(added.lookupID))
        }
        try #require(others.count >= 2)
        if edit != .deletedPutBack { try writer.set("new", service: "s", account: "alice") }
        let (reader, _) = try TestServer.counted(location, key: key)
        func alice() throws(VaultError) -> String? {
            do { return try reader.string(service: "s", account: "alice") } catch .itemNotFound { return nil }
        }
        let expected: String? = edit == .deletedPutBack ? nil : "new"
        if edit == .deletedPutBack { #expect(try writer.delete(service: "s", account: "alice")) }
        #expect(try alice() == expected)
        #expect(try reader.string(service: "t", account: others[1]) == "x")
        switch edit {
        case .putBack:
            _ = try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                    [name, .bytes(old.lookupID), .bytes(old.nonce), .bytes(old.sealed)])
        case .deleted:
            _ = try attacker.change("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(old.lookupID)])
        case .deletedPutBack:
            _ = try attacker.change("INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)",
                                    [name, .bytes(old.lookupID), .bytes(old.serviceTag), .bytes(old.nonce), .bytes(old.sealed)])
        }
        try writer.set("moved", service: "t", account: others[0])
        try reader.set("own", service: "t", account: others[1], keepHistory: false)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try alice() }
    }

    /// What the DBA does to a host key wrap, leaving the header row alone.
    enum WrapEdit: CaseIterable, Sendable {
        /// One host's wrap deleted.
        case deleted
        /// One host's sealed master key replaced by another host's.
        case swapped
        /// A row rewritten with the same values: a new row version, nothing changed.
        case rewritten
    }

    /// A vault with host key wraps: a wrap edited with SQL, the header left alone, makes the
    /// next `get` of a reader that verified everything before check the header again
    /// (the wraps' `xmin`s are part of the vault state), and its tag, which covers the
    /// wraps, no longer verifies. A row rewritten unchanged only costs that check.
    @Test(arguments: WrapEdit.allCases)
    func aHostWrapEditedWithoutTheHeaderIsCaughtByTheNextGet(_ edit: WrapEdit) throws {
        let (vault, storage, location, _) = try TestServer.countedVault()
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web-1")
        try vault.addHost(HostKeyPair.generate().publicKey, name: "web-2")
        try vault.set("one", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "one")
        let before = storage.connection.roundTrips
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.connection.roundTrips - before == 1)
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        switch edit {
        case .deleted:
            _ = try attacker.change("DELETE FROM vaultkit_host_wraps WHERE vault = $1 AND name = 'web-2'", [name])
        case .swapped:
            _ = try attacker.change("""
                UPDATE vaultkit_host_wraps SET sealed_master_key = (SELECT sealed_master_key FROM vaultkit_host_wraps WHERE vault = $1 AND name = 'web-1')
                WHERE vault = $1 AND name = 'web-2'
                """, [name])
        case .rewritten:
            _ = try attacker.change("UPDATE vaultkit_host_wraps SET name = name WHERE vault = $1 AND name = 'web-2'", [name])
        }
        if edit == .rewritten {
            let before = storage.connection.roundTrips
            #expect(try vault.string(service: "s", account: "a") == "one")
            #expect(storage.connection.roundTrips - before > 1)
        } else {
            #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) { try vault.string(service: "s", account: "a") }
        }
    }

    /// A vault without host key wraps reads none (its header says so, under the tag): rows
    /// the DBA adds to the wraps table for it are no part of its state, so a verified
    /// `get` stays one round trip, `verify()` passes, and the rows open nothing.
    @Test func wrapRowsAddedToAVaultWithoutHostsAreNoPartOfIt() throws {
        let (vault, storage, location, _) = try TestServer.countedVault()
        try vault.set("one", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "one")
        // Its lone reads leave the wraps' subquery out (PostgresSQL.loneReadWithoutHostWraps).
        #expect(storage.loneReadStatement == PostgresSQL.loneReadWithoutHostWraps)
        let host = HostKeyPair.generate()
        _ = try TestServer.attacker().change(
            "INSERT INTO vaultkit_host_wraps (vault, name, public_key, sealed_master_key) VALUES ($1, 'stray', $2, $3)",
            [.text(location.vaultName), .bytes(host.publicKey.bytes), .bytes([UInt8](repeating: 7, count: 80))])
        let before = storage.connection.roundTrips
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.connection.roundTrips - before == 1)
        #expect(try vault.verify() == 1)
        let identity = try vault.identity()
        #expect(throws: VaultError.self) { try Vault.open(postgres: location, hostKey: host, identity: identity) }
    }

    /// A reader that verified the vault without host key wraps, so reads without them,
    /// and another handle adds hosts: the header changed, so the reader verifies again,
    /// and from then on its lone reads show the wraps, so a wrap the DBA deletes, the
    /// header left alone, is caught by its next `get` (as for a reader that opened the
    /// vault with its hosts).
    @Test func aReaderWhoseVaultGainsHostsReadsTheirWrapsFromThen() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        try vault.set("one", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.loneReadStatement == PostgresSQL.loneReadWithoutHostWraps)
        let other = try Vault.open(postgres: location, key: key)
        try other.addHost(HostKeyPair.generate().publicKey, name: "web-1")
        try other.addHost(HostKeyPair.generate().publicKey, name: "web-2")
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.loneReadStatement == PostgresSQL.loneRead)
        let before = storage.connection.roundTrips
        #expect(try vault.string(service: "s", account: "a") == "one")
        #expect(storage.connection.roundTrips - before == 1)
        _ = try TestServer.attacker().change("DELETE FROM vaultkit_host_wraps WHERE vault = $1 AND name = 'web-2'", [.text(location.vaultName)])
        #expect(throws: VaultError.tampered(reason: .headerFailedAuthentication)) { try vault.string(service: "s", account: "a") }
    }
}
