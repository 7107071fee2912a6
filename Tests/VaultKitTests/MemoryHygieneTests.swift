import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
@testable import VaultKit

/// Secrets are wiped from memory when released; checked through a debug-only hook
/// that sees each buffer after the wipe and before it is freed.
@Suite(.offCooperativePool, .serialized) struct MemoryHygieneTests {
    /// Records released buffers that still held the canary's first bytes.
    final class Watcher: Sendable {
        let dirty = Mutex(0)
        let seen = Mutex(0)
        func install(canary: [UInt8]) {
            SecureBuffer.releaseObserver.withLock { observer in
                observer = { [self] bytes in
                    seen.withLock { $0 += 1 }
                    if bytes.count >= canary.count, Array(bytes.prefix(canary.count)) == canary { dirty.withLock { $0 += 1 } }
                    if bytes.contains(where: { $0 != 0 }) { dirty.withLock { $0 += 1 } }
                }
            }
        }
        func uninstall() { SecureBuffer.releaseObserver.withLock { $0 = nil } }
    }

    @Test func secretBytesAreZeroedWhenReleased() throws {
        let canary = Array("zeroize-canary-0123456789".utf8)
        let watcher = Watcher()
        watcher.install(canary: canary)
        defer { watcher.uninstall() }
        do {
            let secret = SecretBytes(canary)
            #expect(secret.count == canary.count)
        }
        #expect(watcher.seen.withLock { $0 } >= 1)
        #expect(watcher.dirty.withLock { $0 } == 0)
    }

    @Test func keysAndDecryptedRecordsAreZeroedAfterUse() throws {
        let watcher = Watcher()
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("zeroize-canary", service: "s", account: "a")
        vault.close()
        watcher.install(canary: Array("zeroize-canary".utf8))
        defer { watcher.uninstall() }
        do {
            let reopened = try Vault.open(at: path, key: key)
            #expect(try reopened.string(service: "s", account: "a") == "zeroize-canary")
            reopened.close()
        }
        // Master key, subkeys, KEK, the decrypted record and the returned secret.
        #expect(watcher.seen.withLock { $0 } >= 5)
        #expect(watcher.dirty.withLock { $0 } == 0)
    }
}
