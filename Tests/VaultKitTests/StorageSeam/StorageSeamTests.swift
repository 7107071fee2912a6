import Foundation
import Testing
import StorageConformance
import TestSupport
import TestTraits
@testable import VaultKit

/// The engine's behaviour through the storage seam, on both implementations of
/// ``VaultStorage``: the SQLite file and ``InMemoryStorage``. The same assertions pass
/// on both, so the engine depends on the protocol's contract and nothing else; an
/// engine for another database runs the same checks in its own test target
/// (PostgreSQL: `PostgresConformanceTests`).
@Suite(.offCooperativePool) struct StorageSeamTests {
    /// Every check of Tests/StorageConformance, on each storage.
    @Test(arguments: SeamBackend.allCases, StorageConformance.Check.allCases)
    func conformance(_ backend: SeamBackend, _ check: StorageConformance.Check) throws {
        try check.run(backend.makeVault("\(check)"))
    }
}

/// The storage failures keep the public errors and texts they had before the seam.
@Suite(.offCooperativePool) struct StorageErrorBoundaryTests {
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
