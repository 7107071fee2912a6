import Foundation
import Testing
import TestSupport
@testable import VaultKit

/// The engine's behaviour through the storage seam, on both implementations of
/// ``VaultStorage``: the SQLite file and ``InMemoryStorage``. The same assertions pass
/// on both, so the engine depends on the protocol's contract and nothing else; an
/// engine for another database joins `SeamBackend` and must pass them too.
@Suite struct StorageSeamTests {
    @Test(arguments: SeamBackend.allCases)
    func itemsAreSetReadListedAndDeleted(_ backend: SeamBackend) throws {
        let fixture = try backend.makeVault()
        let vault = fixture.vault
        try vault.set("one", service: "api.example.com", account: "alice")
        try vault.add("two", service: "api.example.com", account: "bob", label: "Bob")
        try vault.set("three", service: "db.example.com", account: "alice")
        try vault.update("one-b", service: "api.example.com", account: "alice")
        #expect(try vault.string(service: "api.example.com", account: "alice") == "one-b")
        #expect(try vault.item(service: "api.example.com", account: "bob").label == "Bob")
        #expect(throws: VaultError.duplicateItem) { try vault.add("x", service: "api.example.com", account: "bob") }
        #expect(try vault.items(service: "api.example.com").map(\.account) == ["alice", "bob"])
        #expect(try vault.delete(service: "api.example.com", account: "bob"))
        #expect(try !vault.delete(service: "api.example.com", account: "bob"))
        #expect(throws: VaultError.itemNotFound) { try vault.string(service: "api.example.com", account: "bob") }
        #expect(try vault.deleteAll(service: "db.example.com") == 1)
        #expect(try vault.items().map(\.service) == ["api.example.com"])
        #expect(try vault.verify() == 1)
        // What was written is there for the next opener, through the same seam.
        let reopened = try fixture.reopen()
        #expect(try reopened.string(service: "api.example.com", account: "alice") == "one-b")
        #expect(fixture.rowCount() == 1)
    }

    @Test(arguments: SeamBackend.allCases)
    func aRowPutBackBehindTheEnginesBackIsRejected(_ backend: SeamBackend) throws {
        let fixture = try backend.makeVault()
        try fixture.vault.set("old", service: "s", account: "alice")
        let old = try #require(fixture.rows().first)
        try fixture.vault.set("other", service: "s", account: "bob")
        try fixture.vault.set("new", service: "s", account: "alice")
        // Another connection restores one row's older version: self-consistent, and sealed
        // under the right keys, but no longer the manifest's.
        fixture.replace(old)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try fixture.vault.string(service: "s", account: "alice")
        }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try fixture.vault.verify()
        }
    }

    @Test(arguments: SeamBackend.allCases)
    func aRowDeletedBehindTheEnginesBackIsRejected(_ backend: SeamBackend) throws {
        let fixture = try backend.makeVault()
        try fixture.vault.set("a", service: "s", account: "alice")
        try fixture.vault.set("b", service: "s", account: "bob")
        let victim = try #require(fixture.rows().first)
        fixture.remove(victim.lookupID)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try fixture.vault.items()
        }
    }

    @Test(arguments: SeamBackend.allCases)
    func aFailedBatchLeavesNothingBehind(_ backend: SeamBackend) throws {
        struct Abort: Error {}
        let fixture = try backend.makeVault()
        try fixture.vault.set("kept", service: "s", account: "alice")
        let before = Set(fixture.rows().map(\.sealed))
        #expect(throws: (any Error).self) {
            try fixture.vault.batch { batch in
                try batch.set("changed", service: "s", account: "alice")
                try batch.add("new", service: "s", account: "bob")
                _ = try batch.delete(service: "s", account: "alice")
                throw Abort()
            }
        }
        // A batch failing on the engine's own error rolls back too.
        #expect(throws: VaultError.duplicateItem) {
            try fixture.vault.batch { batch in
                try batch.add("new", service: "s", account: "bob")
                try batch.add("again", service: "s", account: "bob")
            }
        }
        #expect(Set(fixture.rows().map(\.sealed)) == before)
        #expect(try fixture.vault.items().map(\.account) == ["alice"])
        #expect(try fixture.vault.string(service: "s", account: "alice") == "kept")
        #expect(try fixture.vault.verify() == 1)
        // The manifest was not left half-applied: the next write builds on it.
        try fixture.vault.set("after", service: "s", account: "bob")
        #expect(try fixture.reopen().verify() == 2)
    }

    @Test(arguments: SeamBackend.allCases)
    func rekeyRunsThroughTheSeam(_ backend: SeamBackend) throws {
        let fixture = try backend.makeVault()
        try fixture.vault.set("secret", service: "s", account: "alice")
        try fixture.vault.rekey()
        #expect(try fixture.vault.string(service: "s", account: "alice") == "secret")
        #expect(try fixture.reopen().verify() == 1)
    }
}

/// The storage failures keep the public errors and texts they had before the seam.
@Suite struct StorageErrorBoundaryTests {
    @Test func sqliteFailuresLeaveTheStorageLayerAsStorageErrors() throws {
        let path = Fixtures.vaultPath()
        Fixtures.write(Array("not a database, just text that is long enough".utf8), to: path)
        #expect(throws: StorageError.notAVault(location: path)) {
            _ = try VaultDatabase.openExisting(path, busyTimeoutMilliseconds: 100)
        }
        #expect(throws: VaultError.notAVault(path: path)) { try Vault.open(at: path, key: VaultKey.random()) }
    }

    @Test func theVaultLayerConvertsEachStorageError() {
        #expect(VaultError(.schemaChanged) == .tampered(reason: .schemaChanged))
        #expect(VaultError(.generationMissing) == .tampered(reason: .generationMissing))
        #expect(VaultError(.generationInvalid) == .tampered(reason: .generationInvalid))
        #expect(VaultError(.busy(location: "/v")) == .busy(path: "/v"))
        #expect(VaultError(.io(path: "/v", errno: 28)) == .io(path: "/v", errno: 28))
        #expect(VaultError(.corrupted(reason: .missingHeader)) == .corrupted(reason: .missingHeader))
        #expect(VaultError(.unsupportedFormatVersion(9)) == .unsupportedFormatVersion(9))
    }

    @Test func theEnginesOwnErrorComesBackFromInsideAStorageCallUnchanged() throws {
        let storage = InMemoryStorage()
        let vault = try Vault.create(in: storage, key: VaultKey.random())
        try vault.set("x", service: "s", account: "a")
        // A row whose nonce has the wrong length: the engine's check throws inside the
        // storage's row scan, and that error, not a storage one, reaches the caller.
        storage.tamper { contents in
            for id in contents.rows.keys { contents.rows[id]?.nonce = [1, 2, 3] }
        }
        #expect(throws: VaultError.corrupted(reason: .invalidItemRowFieldLength)) { try vault.verify() }
    }
}
