import Foundation
import Synchronization
import VaultKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cross-process lock that makes a token refresh (read the vault, ask the token endpoint,
/// write the vault) one step for every process sharing a vault.
///
/// For a vault file it is `flock(2)` on a lock file beside the vault (`<vault>.vaultauth-lock`), never on the
/// vault file itself: SQLite holds POSIX `fcntl` locks on the vault, and closing *any*
/// descriptor of a file drops all of a process's `fcntl` locks on it. A lock file of our own
/// has no such interaction, and `flock` locks belong to the open file description, so two
/// clients in one process exclude each other as two processes do. The lock is released when
/// the descriptor is closed, including when the holder dies.
///
/// A vault that other hosts reach (PostgreSQL) offers a lock of its own (VaultKit's
/// `SharedLock`, an advisory lock in the database, one per token item): a file beside the
/// vault would only exclude processes on this host. A vault in an engine without one gets
/// a lock file in this user's runtime directory, named by a hash of its URL: a URL is no
/// path to put a file beside.
struct RefreshLock: Sendable {
    /// The lock file's path, used when the vault has no shared lock.
    let path: String
    /// The vault's shared lock (one per token item), when it has one.
    let shared: (any SharedLock)?

    /// Asks the vault for its shared lock now, while it is open: a refresh after the vault
    /// was closed still takes the lock, and its write reports the closed vault.
    ///
    /// - Throws: ``TokenStoreError/vault(_:)`` when the vault is closed.
    init(store: TokenStore) throws(TokenStoreError) {
        path = Self.lockFilePath(for: store.vault.location, environment: ProcessInfo.processInfo.environment)
        do {
            shared = try store.vault.sharedLock(named: "vaultauth-refresh\u{0}\(store.issuer)\u{0}\(store.account)")
        } catch {
            throw .vault(error)
        }
    }

    /// The lock file for the vault at `location`: `<vault>.vaultauth-lock` beside a vault
    /// file; for a vault in a storage engine, `vaultauth-<SHA-256 of its URL>.lock` in
    /// `$XDG_RUNTIME_DIR` (this user's, mode 0700), else in the temporary directory, where
    /// ``lockBlocking(_:)`` refuses a file another user planted.
    static func lockFilePath(for location: Vault.Location, environment: [String: String]) -> String {
        switch location {
        case .file(let path):
            return path + ".vaultauth-lock"
        case .engine(let url):
            let hex = SHA256.hash(Array(url.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            let directory = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
                ?? environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
            return (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/vaultauth-" + hex + ".lock"
        }
    }

    /// Waits for the lock, on a thread outside the cooperative pool.
    ///
    /// - Throws: ``TokenStoreError/lock(path:errno:)`` when the lock file cannot be opened, is
    ///   not a regular file owned by this user (`EPERM`), or `flock` fails;
    ///   ``TokenStoreError/vault(_:)`` when the vault's shared lock cannot be taken.
    func acquire() async throws(TokenStoreError) -> HeldRefreshLock {
        let (path, shared) = (self.path, self.shared)
        return try await OffPool.run { () throws(TokenStoreError) -> HeldRefreshLock in
            guard let shared else { return try Self.lockBlocking(path) }
            do throws(VaultError) {
                return HeldRefreshLock(.shared(try shared.acquire()))
            } catch {
                throw .vault(error)
            }
        }
    }

    private static func lockBlocking(_ path: String) throws(TokenStoreError) -> HeldRefreshLock {
        // The lock file holds nothing, but a file another user controls could be used to hold
        // our lock forever: refuse anything but our own regular file.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .lock(path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .lock(path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            close(fd)
            throw .lock(path: path, errno: EPERM)
        }
        if SystemIO.retryingInterrupted({ flock(fd, LOCK_EX) }) != 0 {
            let code = errno
            close(fd)
            throw .lock(path: path, errno: code)
        }
        return HeldRefreshLock(.file(fd))
    }
}

/// A held ``RefreshLock``: released by ``release()`` (idempotent) or when it is deallocated.
final class HeldRefreshLock: Sendable {
    enum Hold: Sendable {
        /// The lock file's descriptor.
        case file(Int32)
        /// The vault's own lock.
        case shared(any HeldSharedLock)
    }

    private let hold: Hold
    private let released = Atomic<Bool>(false)

    fileprivate init(_ hold: Hold) {
        self.hold = hold
    }

    /// Closes the lock file, which releases the lock; `close` on a local file does not block.
    /// A shared lock is released by ending its database session, which does not wait for an answer.
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch hold {
        case .file(let fd): close(fd)
        case .shared(let lock): lock.release()
        }
    }

    deinit { release() }
}
