import Dispatch
import Foundation
import Synchronization
import TestSupport
import VaultKit
import VaultProfile

/// The profile most tests keep.
struct TestProfile: Codable, Sendable, Equatable {
    var nickname: String
    var bio: String = ""
}

let testService = "tests.profile"

/// A new passphrase vault in a fresh temporary directory, with the cheapest Argon2id.
func makeVault(_ label: String = #function) throws -> Vault {
    let path = "\(TestPaths.temporaryDirectory(label))/profile.vault"
    return try Vault.create(at: path, passphrase: "test passphrase", kdf: testKDF)
}

/// The real vault storage, counting what reaches it.
final class CountingStorage: ProfileSnapshotStorage {
    let base: VaultProfileStorage
    private let counts = Mutex<(loads: Int, saves: Int, deletes: Int)>((0, 0, 0))

    init(vault: Vault, service: String = testService) {
        base = VaultProfileStorage(vault: vault, service: service)
    }

    var saves: Int { counts.withLock { $0.saves } }
    var deletes: Int { counts.withLock { $0.deletes } }

    func load(account: String) throws -> StoredProfileSnapshot? {
        defer { counts.withLock { $0.loads += 1 } }
        return try base.load(account: account)
    }

    func save(_ snapshot: StoredProfileSnapshot, account: String) throws {
        try base.save(snapshot, account: account)
        counts.withLock { $0.saves += 1 }
    }

    func delete(account: String) throws -> Bool {
        defer { counts.withLock { $0.deletes += 1 } }
        return try base.delete(account: account)
    }
}

/// Storage whose writes block until the test opens the gate, like a vault whose write
/// lock another process holds.
final class BlockedStorage: ProfileSnapshotStorage {
    private let gate = Gate()

    func open() { gate.open() }
    func load(account: String) throws -> StoredProfileSnapshot? { nil }
    func save(_ snapshot: StoredProfileSnapshot, account: String) throws { gate.wait() }
    func delete(account: String) throws -> Bool { false }
}

final class Gate: @unchecked Sendable {
    // DispatchSemaphore is thread-safe; it is only not annotated Sendable on every platform.
    private let semaphore = DispatchSemaphore(value: 0)
    func wait() { semaphore.wait(); semaphore.signal() }
    func open() { semaphore.signal() }
}

/// Records what a migration hook was called with.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with ``TimedOut`` if it has not finished after `timeout`: a
/// wait for an event that should come, never a measure of speed.
func withTimeout<T: Sendable>(_ what: String, _ timeout: Duration = .seconds(30), _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// The first `count` elements of `stream`.
func values<T: Sendable>(_ count: Int, of stream: AsyncStream<T>, timeout: Duration = .seconds(30)) async throws -> [T] {
    try await withTimeout("\(count) published values", timeout) {
        var values: [T] = []
        for await value in stream {
            values.append(value)
            if values.count == count { break }
        }
        return values
    }
}

/// Polls `condition` until it holds.
func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The profile stored for `account`, decoded directly from the vault item.
func storedProfile<P: Decodable>(_ type: P.Type = TestProfile.self, in vault: Vault, account: String, service: String = testService) throws -> P? {
    try vault.entry(service: service, account: account)?.value(P.self)
}

/// The schema version a snapshot was stored with, read from the vault item itself.
func storedSchemaVersion(in vault: Vault, account: String, service: String = testService) throws -> Int? {
    try vault.entry(service: service, account: account)?.encodedValue().schemaVersion
}
