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
}
