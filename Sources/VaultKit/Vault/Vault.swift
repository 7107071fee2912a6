#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization

/// An encrypted vault of generic-password items in one file, like a Keychain you carry.
///
/// Items are identified by a service and an account and hold a secret plus optional
/// attributes (see ``VaultItem``). Everything about an item is sealed with
/// XSalsa20-Poly1305 under a random master key, which is itself wrapped under a key
/// derived from your passphrase with Argon2id, or under a raw 32-byte ``VaultKey``.
///
/// For example:
///
/// ```swift
/// let vault = try Vault.create(at: "/home/alice/.local/share/app/app.vault", passphrase: "correct horse")
/// try vault.set("s3cr3t", service: "api.example.com", account: "alice")
/// let token = try vault.string(service: "api.example.com", account: "alice")   // "s3cr3t"
/// ```
///
/// A `Vault` is `Sendable`: share one instance between tasks and threads. Several
/// processes may open the same file at once; a writer waits for another writer's
/// lock up to the busy timeout. Every write is durable when the call returns.
public final class Vault: Sendable {
    /// Where the vault lives: ``Location/file(path:)`` for a vault file,
    /// ``Location/engine(url:)`` for a vault in a storage engine (its URL without the password).
    public let location: Location

    /// `nil` once closed. One connection per `Vault`, serialised by the mutex: SQLite
    /// point queries take microseconds, so a pool would add nothing but contention.
    private let state: Mutex<UnlockedVault?>
    /// A task executor on this vault's own serial queue, where its async calls run their
    /// blocking work: the vault's `async` calls made by a task running there do their
    /// work inline instead of hopping to the queue and back. See ``VaultExecutor``.
    public let executor = VaultExecutor()
    /// The thread inside ``withUnlocked(_:)`` (0 for none), so a call made from inside a
    /// ``batch(_:)`` closure fails fast with ``VaultError/reentrantCall`` instead of
    /// waiting forever for the lock its own thread holds.
    private let lockOwner = Atomic<UInt>(0)
    /// ``close()`` was called from inside a batch closure: close when the batch ends.
    private let closeWhenUnlocked = Atomic<Bool>(false)

    init(location: Location, unlocked: consuming sending UnlockedVault) {
        self.location = location
        self.state = Mutex(unlocked)
    }

    /// How long a call waits for another process's write lock before ``VaultError/busy(path:)``.
    public static let defaultBusyTimeout: Duration = .seconds(10)

    /// Closes the file and wipes the keys; later calls throw ``VaultError/closed``.
    /// Releasing the last reference does the same. Tasks still on ``executor`` move to
    /// Swift's global executor.
    public func close() {
        executor.retire()
        // From inside a batch closure the lock is this thread's: close when it is released.
        if lockOwner.load(ordering: .acquiring) == ThreadIdentity.current {
            closeWhenUnlocked.store(true, ordering: .releasing)
            return
        }
        state.withLock { $0 = nil }
    }

    deinit { executor.retire() }

    // MARK: Plumbing

    /// Runs `body` on the open vault under the mutex.
    func withUnlocked<Result: Sendable>(_ body: (inout UnlockedVault) throws(VaultError) -> Result) throws(VaultError) -> Result {
        let thread = ThreadIdentity.current
        guard lockOwner.load(ordering: .acquiring) != thread else { throw .reentrantCall }
        return try state.withLock { (state) throws(VaultError) -> Result in
            lockOwner.store(thread, ordering: .releasing)
            defer { lockOwner.store(0, ordering: .releasing) }
            guard var vault = state.take() else { throw .closed }
            defer { state = closeWhenUnlocked.exchange(false, ordering: .acquiringAndReleasing) ? nil : vault }
            vault.manifestCheck.guardPending = nil
            // Another process changed the keys in a way this handle could not follow inside
            // the transaction (a new salt for the same passphrase). `keyChanged` is thrown
            // before anything is written, so `body` runs again when the passphrase this
            // handle holds opens the new wrapping: again after each such change that lands
            // in between (each one another process's commit), up to a bound.
            // A state another process committed, verified by this call, is compared with the
            // rollback record after it, outside every transaction (see
            // checkPendingRollbackGuard); also when the call failed (an item not found):
            // what it verified is kept for later calls, a prepared set's among them.
            var follows = 0
            while true {
                let result: Result
                do throws(VaultError) {
                    result = try body(&vault)
                } catch .keyChanged {
                    try Self.checkPendingRollbackGuardFollowing(&vault)
                    follows += 1
                    guard follows <= Self.maximumFollowedKeyChanges, try vault.followChangedWrapping() else { throw .keyChanged }
                    continue
                } catch {
                    try Self.checkPendingRollbackGuardFollowing(&vault)
                    throw error
                }
                try Self.checkPendingRollbackGuardFollowing(&vault)
                return result
            }
        }
    }

    /// How many changes of the wrapping by other processes one call follows before it
    /// gives up with ``VaultError/keyChanged``: far more than a person runs `vault passwd`
    /// while one write waits.
    private static let maximumFollowedKeyChanges = 16

    /// The rollback guard's comparison of a state this call verified, following key
    /// changes as the call itself does: the comparison reads the state again, which a
    /// passphrase change by another process in between makes unreadable with the keys
    /// this handle held (a successful call must not then fail with `keyChanged`).
    private static func checkPendingRollbackGuardFollowing(_ vault: inout UnlockedVault) throws(VaultError) {
        var follows = 0
        while true {
            do throws(VaultError) {
                return try vault.checkPendingRollbackGuard()
            } catch .keyChanged {
                follows += 1
                guard follows <= maximumFollowedKeyChanges, try vault.followChangedWrapping() else { throw .keyChanged }
            }
        }
    }
}
