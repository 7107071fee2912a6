import Synchronization
import VaultKit

/// A ``SharedLock`` in the database: a session-level `pg_advisory_lock` on a connection of
/// its own, so every host on the vault waits for the same lock. The key is a digest of the
/// vault's name and the lock's name, so vaults in one database never share a lock.
///
/// The lock lives exactly as long as its connection: closing it (``HeldSharedLock/release()``)
/// releases it, and so does a holder's death, since the server ends the session when the
/// connection drops. Waits have no time limit, as `flock` has none: a holder is either
/// working, or dead and about to be noticed by the server.
struct PostgresAdvisoryLock: SharedLock {
    let location: PostgresVaultLocation
    /// The `bigint` key of `pg_advisory_lock`.
    let key: Int64

    init(_ location: PostgresVaultLocation, name: String) {
        self.location = location
        key = Self.key(vaultName: location.vaultName, lockName: name)
    }

    func acquire() throws(VaultError) -> any HeldSharedLock {
        do {
            let connection = try PostgresConnection(conninfo: location.conninfo, password: location.password, lockTimeoutMilliseconds: 1)
            try connection.execute(PostgresSQL.noLockTimeout)
            try connection.query(PostgresSQL.advisoryLock, [.int64(key)]) { _ in }
            return HeldPostgresAdvisoryLock(connection, key: key)
        } catch let failure as PostgresFailure {
            throw VaultError(failure.storageError(location: location.description))
        } catch {
            throw VaultError(StorageError.corrupted(reason: .unexpectedStorageError))
        }
    }

    /// FNV-1a (stable across processes and builds) of `vaultkit`, the vault's and the lock's names.
    static func key(vaultName: String, lockName: String) -> Int64 {
        Int64(bitPattern: StableHash.fnv1a("vaultkit\u{0}\(vaultName)\u{0}\(lockName)"))
    }
}

/// A held advisory lock: its connection, closed on release.
final class HeldPostgresAdvisoryLock: HeldSharedLock {
    private let connection: Mutex<PostgresConnection?>
    private let key: Int64

    init(_ connection: consuming sending PostgresConnection, key: Int64) {
        self.connection = Mutex(connection)
        self.key = key
    }

    /// Unlocks, then ends the session. The explicit unlock makes the release take effect
    /// before this returns: closing alone (`PQfinish`) leaves the server's backend to end
    /// the session, and the lock with it, a moment later, so the next holder would wait.
    func release() {
        connection.withLock { held in
            if let open = held {
                _ = try? open.query(PostgresSQL.advisoryUnlock, [.int64(key)]) { _ in }
            }
            held = nil
        }
    }

    deinit { release() }
}
