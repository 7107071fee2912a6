import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Misuse that could corrupt the vault or deadlock fails with a clear error and writes nothing.
@Suite(.offCooperativePool) struct MisuseTests {
    /// A `VaultBatch` kept past its closure must not write: its rows would land outside any
    /// transaction, whose manifest change the next transaction drops, a false `tampered` later.
    @Test func aBatchUsedAfterItsClosureWritesNothing() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        nonisolated(unsafe) var escaped: VaultBatch?
        try vault.batch { batch in
            try batch.set("inside", service: "s", account: "a")
            escaped = batch
        }
        let batch = try #require(escaped)
        #expect(throws: VaultError.batchEnded) { try batch.set("outside", service: "s", account: "b") }
        #expect(throws: VaultError.batchEnded) { try batch.delete(service: "s", account: "a") }
        #expect(throws: VaultError.batchEnded) { try batch.deleteAll(service: "s") }
        #expect(try vault.items().map(\.account) == ["a"])
        vault.close()
        #expect(try Vault.open(at: path, key: key).verify() == 1)
    }

    /// A batch handed to another thread while its closure runs is refused there too: the
    /// connection behind it belongs to the closure's thread for that time.
    @Test func aBatchUsedFromAnotherThreadWritesNothing() throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try vault.batch { batch in
            nonisolated(unsafe) let shared = batch
            nonisolated(unsafe) var result: Result<Void, VaultError>?
            let thread = Thread { result = Result { () throws(VaultError) in try shared.set("x", service: "s", account: "other") } }
            thread.start()
            while result == nil { usleep(1_000) }
            #expect(throws: VaultError.batchEnded) { try result!.get() }
        }
        #expect(try vault.items().isEmpty)
    }

    /// Calling the vault from inside its own batch must fail at once: waiting would be for
    /// the lock its own thread holds, forever.
    @Test func reenteringTheVaultFromABatchFailsFast() throws {
        let (vault, _, _) = try Fixtures.keyVault()
        try vault.set("before", service: "s", account: "a")
        try vault.batch { batch in
            try batch.set("in batch", service: "s", account: "b")
            #expect(throws: VaultError.reentrantCall) { try vault.string(service: "s", account: "a") }
            #expect(throws: VaultError.reentrantCall) { try vault.set("nested", service: "s", account: "c") }
            #expect(throws: VaultError.reentrantCall) { try vault.batch { _ in } }
        }
        #expect(try vault.items().map(\.account) == ["a", "b"])
        // Other threads simply wait for the batch, as before.
        #expect(try vault.string(service: "s", account: "b") == "in batch")
    }

    /// `close()` inside a batch closes the vault once the batch has committed.
    @Test func closingInsideABatchClosesAfterIt() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.batch { batch in
            try batch.set("kept", service: "s", account: "a")
            vault.close()
            try batch.set("also kept", service: "s", account: "b")
        }
        #expect(throws: VaultError.closed) { try vault.items() }
        #expect(try Vault.open(at: path, key: key).items().count == 2)
    }
}
