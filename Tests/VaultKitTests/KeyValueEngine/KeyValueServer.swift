import Foundation

/// A Redis-like key-value server in memory, the third storage the seam's guide is proved
/// with: named databases of string keys and byte values, offering only what such a server
/// offers a client: GET and a scan by key prefix, a lock key set "if not exists" with an
/// owner (`SET lock NX`), and MULTI/EXEC, writes queued by the client and applied at once.
///
/// As in Redis, nothing reads the queued writes before EXEC: ``KeyValueStorage`` builds
/// read-your-own-writes on top, which is the part of the contract such stores make hard.
final class KeyValueServer: @unchecked Sendable {
    /// The server every `memkv://` URL of this process reaches.
    static let shared = KeyValueServer()

    private let lock = NSLock()
    private var databases: [String: KeyValueDatabase] = [:]

    /// The database `name`, empty until first written.
    func database(named name: String) -> KeyValueDatabase {
        lock.withLock {
            if let database = databases[name] { return database }
            let database = KeyValueDatabase()
            databases[name] = database
            return database
        }
    }
}

/// One database of ``KeyValueServer``. Every method is one atomic server command.
final class KeyValueDatabase: @unchecked Sendable {
    private let condition = NSCondition()
    private var values: [String: [UInt8]] = [:]
    /// One more for every EXEC that wrote: what a snapshot's version names.
    private var commits: Int64 = 0
    private var lockOwner: ObjectIdentifier?

    /// Everything committed, and the commit count it is at (a client reading all it needs
    /// in one round trip; here a copy, which costs nothing until the next EXEC).
    func snapshot() -> (values: [String: [UInt8]], version: Int64) {
        condition.withLock { (values, commits) }
    }

    /// EXEC: applies the queued writes (a `nil` value deletes the key) all at once and
    /// returns the commit count after them.
    @discardableResult
    func exec(_ queued: [String: [UInt8]?]) -> Int64 {
        condition.withLock {
            guard !queued.isEmpty else { return commits }
            for (key, value) in queued { values[key] = value }
            commits += 1
            return commits
        }
    }

    /// `SET lock owner NX`, retried until the holder releases it or `timeout` passes;
    /// returns whether `owner` holds the lock.
    func acquireLock(owner: ObjectIdentifier, timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while let holder = lockOwner, holder != owner {
            if !condition.wait(until: deadline), lockOwner != nil { return false }
        }
        lockOwner = owner
        return true
    }

    /// Deletes the lock key if `owner` holds it.
    func releaseLock(owner: ObjectIdentifier) {
        condition.withLock {
            guard lockOwner == owner else { return }
            lockOwner = nil
            condition.broadcast()
        }
    }
}
