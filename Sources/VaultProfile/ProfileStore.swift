import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import VaultConcurrency
import VaultKit

/// The signed-in user's profile: loaded from the vault at start, readable at once from
/// memory, updated locally or from a server's stream, published to subscribers, and
/// written back shortly after every change and on graceful shutdown.
///
/// It replaces the pattern of a singleton that reads the user from the keychain at launch
/// and writes it back in `applicationWillTerminate`, a hook that may never run, and where
/// unfinished async work dies with the process. Here a crash, even `kill -9`, loses at most
/// the changes of the last ``ProfileStoreConfiguration/debounce`` window.
///
/// For example:
///
/// ```swift
/// let store = ProfileStore<Profile>(vault: vault, service: "com.example.app.profile")
/// let group = ServiceGroup(services: [store], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// async let running: Void = group.run()
///
/// let loaded = try await store.start(account: userID)      // at sign-in
/// try await store.follow(server.profileUpdates(userID))    // any AsyncSequence of Profile
/// try await store.update { $0.nickname = "Alice" }
/// print(store.current?.nickname ?? "")                     // synchronous, from memory
/// for await profile in store.updates() { render(profile) } // current value first
/// ```
///
/// One account is signed in at a time, and each account has its own snapshot: the vault
/// item (`service`, account) of a ``VaultProfileStorage``. ``start(account:)`` can be
/// called long after the store began running, when the user signs in or signs up.
public actor ProfileStore<Profile: Codable & Sendable>: Service {
    /// How the store versions, debounces and finally writes.
    public nonisolated let configuration: ProfileStoreConfiguration

    private let storage: any ProfileSnapshotStorage
    private let migration: ProfileMigration<Profile>
    private let logger: Logger
    private let writer = SnapshotWriter()
    private let broadcast = Broadcast<Profile?>(latest: nil)
    private let signedInAccount = Mutex<String?>(nil)
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    private struct Session {
        let id: UInt64
        let account: String
        var loaded = false
    }

    private var session: Session?
    private var lastSessionID: UInt64 = 0
    /// Changes made in this session, and how many of them the last completed write held.
    private var generation: UInt64 = 0
    private var persistedGeneration: UInt64 = 0
    private var debounceTask: Task<Void, Never>?
    /// The last debounce window's task, kept after it ends or is cancelled: awaiting it
    /// tells a test that no write of that window can still come (instead of a fixed wait).
    private(set) var lastDebounceTask: Task<Void, Never>?
    private var remoteTasks: [Task<Void, Never>] = []
    private var isShutDown = false

    /// A store the app let go of stops following remote updates. (A pending debounced write
    /// holds the store until it is done, so this never drops a change.)
    deinit {
        for task in remoteTasks { task.cancel() }
    }

    /// A store whose snapshots are items of `vault` under `service`.
    ///
    /// - Parameters:
    ///   - vault: the open vault the snapshots live in; the store uses its async calls.
    ///   - service: the vault service name of the snapshots, for example `"com.example.app.profile"`;
    ///     the store owns every item under it.
    ///   - configuration: the snapshots' schema version, the write debounce window and the
    ///     shutdown deadline.
    ///   - migration: called at start for a snapshot of another schema version; by default
    ///     such a snapshot is kept untouched and reported as ``ProfileLoadResult/unreadable(storedVersion:)``.
    ///   - logger: receives no profile contents, secrets or account names at levels above `.debug`.
    public init(
        vault: Vault, service: String,
        configuration: ProfileStoreConfiguration = ProfileStoreConfiguration(),
        migration: @escaping ProfileMigration<Profile> = { _ in .keep },
        logger: Logger = Logger(label: "VaultProfile")
    ) {
        self.init(storage: VaultProfileStorage(vault: vault, service: service), configuration: configuration, migration: migration, logger: logger)
    }

    /// A store over any ``ProfileSnapshotStorage``, such as a wrapper around ``VaultProfileStorage``.
    public init(
        storage: any ProfileSnapshotStorage,
        configuration: ProfileStoreConfiguration = ProfileStoreConfiguration(),
        migration: @escaping ProfileMigration<Profile> = { _ in .keep },
        logger: Logger = Logger(label: "VaultProfile")
    ) {
        self.storage = storage
        self.configuration = configuration
        self.migration = migration
        self.logger = logger
    }

    // MARK: Reading

    /// The current profile, read synchronously from memory on any thread; `nil` before
    /// ``start(account:)`` has loaded one, and after ``signOut()``.
    public nonisolated var current: Profile? {
        // The broadcast keeps a latest value (made with one), so the outer optional is always set.
        broadcast.latest ?? nil
    }

    /// The current profile, read on the actor: it reflects every call made to the store before.
    public var profile: Profile? {
        current
    }

    /// The signed-in account, if any.
    public nonisolated var account: String? {
        signedInAccount.withLock { $0 }
    }

    /// Whether a change has not been written yet.
    public var hasUnsavedChanges: Bool {
        generation != persistedGeneration
    }

    /// Every change of the profile, starting with the current value; `nil` means no
    /// profile (signed out, or nothing loaded). Any number of subscribers may listen;
    /// each receives every change, in order. The stream ends when the store shuts down.
    public nonisolated func updates() -> AsyncStream<Profile?> {
        broadcast.subscribe()
    }

    // MARK: Signing in and out

    /// Signs `account` in and loads its snapshot, as the app does at launch for a
    /// remembered user, or later at sign-in or sign-up.
    ///
    /// An account that was signed in before is first written back (not deleted).
    ///
    /// - Returns: what was found; see ``ProfileLoadResult``. Subscribers receive the
    ///   loaded profile, or `nil` when there is none.
    /// - Throws: ``ProfileStoreError/shutDown``; ``ProfileStoreError/superseded`` if
    ///   another `start` or ``signOut()`` ran meanwhile; the storage's errors, such as
    ///   `VaultError.tampered(reason:)`.
    @discardableResult
    public func start(account: String) async throws -> ProfileLoadResult<Profile> {
        guard !isShutDown else { throw ProfileStoreError.shutDown }
        try await endSession(deletingSnapshot: false)
        lastSessionID += 1
        let id = lastSessionID
        session = Session(id: id, account: account)
        generation = 0
        persistedGeneration = 0
        signedInAccount.withLock { $0 = account }
        logger.debug("loading profile snapshot", metadata: ["account": "\(account)"])

        let storage = self.storage
        let stored: StoredProfileSnapshot?
        do {
            stored = try await writer.perform { try storage.load(account: account) }
        } catch {
            if session?.id == id { clearSession() }
            logger.error("profile snapshot could not be read", metadata: ["error": "\(error)"])
            throw error
        }
        guard session?.id == id else { throw ProfileStoreError.superseded }
        guard !isShutDown else { throw ProfileStoreError.shutDown }
        session?.loaded = true

        let result = try await resolve(stored, account: account, sessionID: id)
        logger.info("profile store started", metadata: ["snapshot": "\(result.kind)", "schemaVersion": "\(configuration.schemaVersion)"])
        return result
    }

    /// Decodes a stored snapshot, or hands it to the migration hook.
    private func resolve(_ stored: StoredProfileSnapshot?, account: String, sessionID: UInt64) async throws -> ProfileLoadResult<Profile> {
        guard let stored else { return .none }
        if stored.schemaVersion == configuration.schemaVersion, let profile = try? decoder.decode(Profile.self, from: stored.data) {
            broadcast.publish(profile)
            return .loaded(profile)
        }
        logger.notice("profile snapshot does not match the current schema; calling the migration hook",
                      metadata: ["storedVersion": "\(stored.schemaVersion)", "schemaVersion": "\(configuration.schemaVersion)"])
        let decision: ProfileMigrationDecision<Profile>
        do {
            decision = try migration(stored)
        } catch {
            logger.warning("profile migration hook threw; the snapshot is kept", metadata: ["error": "\(type(of: error))"])
            decision = .keep
        }
        switch decision {
        case .migrate(let profile):
            apply(profile)
            do {
                try await writeSnapshot()
            } catch {
                logger.error("migrated profile could not be written yet; will retry", metadata: ["error": "\(error)"])
            }
            return .migrated(profile, fromVersion: stored.schemaVersion)
        case .discard:
            let storage = self.storage
            try await writer.perform { try storage.delete(account: account) }
            logger.notice("profile snapshot of an old schema discarded by the migration hook", metadata: ["storedVersion": "\(stored.schemaVersion)"])
            return .discarded(fromVersion: stored.schemaVersion)
        case .keep:
            return .unreadable(storedVersion: stored.schemaVersion)
        }
    }

    /// Signs the account out: stops following its remote updates, forgets its profile
    /// (subscribers receive `nil`) and deletes its snapshot from the vault, after any
    /// write already under way. Does nothing when no account is signed in.
    public func signOut() async throws {
        try await endSession(deletingSnapshot: true)
    }

    private func endSession(deletingSnapshot: Bool) async throws {
        guard let ending = session else { return }
        debounceTask?.cancel()
        debounceTask = nil
        for task in remoteTasks { task.cancel() }
        remoteTasks = []
        if deletingSnapshot {
            clearSession()
            let storage = self.storage
            try await writer.perform { try storage.delete(account: ending.account) }
            logger.info("signed out; profile snapshot deleted")
        } else {
            do {
                try await writeSnapshot()
            } catch {
                scheduleWrite()
                throw error
            }
            if session?.id == ending.id { clearSession() }
        }
    }

    private func clearSession() {
        session = nil
        generation = 0
        persistedGeneration = 0
        signedInAccount.withLock { $0 = nil }
        broadcast.publish(nil)
    }

    // MARK: Changing

    /// Changes the profile in place, publishes it and schedules a write.
    ///
    /// For example, `try await store.update { $0.nickname = "Alice" }`.
    ///
    /// - Returns: the new profile.
    /// - Throws: ``ProfileStoreError/notSignedIn``, ``ProfileStoreError/noProfile``,
    ///   ``ProfileStoreError/shutDown``, or what `change` throws (then nothing changes).
    @discardableResult
    public func update(_ change: (inout Profile) throws -> Void) throws -> Profile {
        try checkSignedIn()
        guard var profile = current else { throw ProfileStoreError.noProfile }
        try change(&profile)
        apply(profile)
        return profile
    }

    /// Replaces the whole profile, for example with the one a sign-up just created.
    ///
    /// - Throws: ``ProfileStoreError/notSignedIn``, ``ProfileStoreError/shutDown``.
    public func replace(with profile: Profile) throws(ProfileStoreError) {
        try checkSignedIn()
        apply(profile)
    }

    /// Applies every profile that `remoteUpdates` delivers, in order, like a server's
    /// snapshot listener, until the sequence ends, the account signs out, the store
    /// shuts down or the app lets go of the store. Returns at once; the sequence is read in
    /// a task of the store's own, which holds the store weakly and is cancelled when the
    /// store is deinitialised, so a stream that never ends cannot keep a store alive.
    ///
    /// Local and remote changes are applied in the order they reach the store; the last
    /// one wins. An error thrown by the sequence ends the following and is logged.
    ///
    /// - Throws: ``ProfileStoreError/notSignedIn``, ``ProfileStoreError/shutDown``.
    public func follow<Updates: AsyncSequence & Sendable>(_ remoteUpdates: Updates) throws(ProfileStoreError) where Updates.Element == Profile {
        try checkSignedIn()
        guard let sessionID = session?.id else { throw ProfileStoreError.notSignedIn }
        remoteTasks.removeAll { $0.isCancelled }
        let logger = self.logger
        remoteTasks.append(Task { [weak self] in
            do {
                for try await profile in remoteUpdates {
                    guard let self, await self.receiveRemote(profile, sessionID: sessionID) else { return }
                }
                logger.debug("remote profile updates ended")
            } catch {
                if !Task.isCancelled {
                    logger.warning("remote profile updates failed", metadata: ["error": "\(type(of: error))"])
                }
            }
        })
    }

    private func receiveRemote(_ profile: Profile, sessionID: UInt64) -> Bool {
        guard !isShutDown, !Task.isCancelled, session?.id == sessionID else { return false }
        apply(profile)
        return true
    }

    private func checkSignedIn() throws(ProfileStoreError) {
        guard !isShutDown else { throw .shutDown }
        guard let session, session.loaded else { throw .notSignedIn }
    }

    private func apply(_ profile: Profile) {
        broadcast.publish(profile)
        generation += 1
        scheduleWrite()
    }

    // MARK: Writing

    /// Writes the current profile now, if it changed since the last write, and returns
    /// once it is durable.
    ///
    /// - Throws: ``ProfileStoreError/notSignedIn``, the storage's errors, ``ProfileStoreError/encodingFailed``.
    public func persist() async throws {
        guard session != nil else { throw ProfileStoreError.notSignedIn }
        try await writeSnapshot()
    }

    /// Starts the debounce window at the first unsaved change; later changes in the window
    /// join the same write. (Restarting the window at every change would let a steady
    /// stream of updates postpone the write forever.)
    private func scheduleWrite() {
        guard debounceTask == nil, !isShutDown, let sessionID = session?.id else { return }
        let debounce = configuration.debounce
        debounceTask = Task {
            do {
                try await Task.sleep(for: debounce)
            } catch {
                return
            }
            await debouncedWrite(sessionID: sessionID)
        }
        lastDebounceTask = debounceTask
    }

    private func debouncedWrite(sessionID: UInt64) async {
        guard session?.id == sessionID, !isShutDown else { return }
        debounceTask = nil
        do {
            try await writeSnapshot()
        } catch {
            logger.error("profile snapshot write failed; retried at the next change, persist() or shutdown", metadata: ["error": "\(error)"])
        }
    }

    private func writeSnapshot(deadline: Duration? = nil) async throws {
        guard let session, session.loaded, generation != persistedGeneration, let profile = current else { return }
        let generation = self.generation
        let data: Data
        do {
            data = try encoder.encode(profile)
        } catch {
            logger.error("profile could not be encoded", metadata: ["error": "\(type(of: error))"])
            throw ProfileStoreError.encodingFailed
        }
        let snapshot = StoredProfileSnapshot(data: data, schemaVersion: configuration.schemaVersion)
        let storage = self.storage
        let account = session.account
        let write: @Sendable () throws -> Void = { try storage.save(snapshot, account: account) }
        if let deadline {
            try await writer.perform(deadline: deadline, timeoutError: ProfileStoreError.shutdownDeadlineExceeded, write)
        } else {
            try await writer.perform(write)
        }
        if self.session?.id == session.id, generation > persistedGeneration {
            persistedGeneration = generation
        }
        logger.debug("profile snapshot written", metadata: ["bytes": "\(data.count)"])
    }

    // MARK: Shutting down

    /// Writes the last changes, within ``ProfileStoreConfiguration/shutdownDeadline``,
    /// and stops: later changes throw ``ProfileStoreError/shutDown`` and subscriber
    /// streams end. ``run()`` calls it on graceful shutdown; call it yourself when the
    /// store runs outside a `ServiceGroup`. Calling it again does nothing.
    ///
    /// - Throws: ``ProfileStoreError/shutdownDeadlineExceeded``, the storage's errors.
    public func shutdown() async throws {
        guard !isShutDown else { return }
        isShutDown = true
        debounceTask?.cancel()
        debounceTask = nil
        for task in remoteTasks { task.cancel() }
        remoteTasks = []
        defer { broadcast.finish() }
        do {
            try await writeSnapshot(deadline: configuration.shutdownDeadline)
        } catch {
            logger.error("final profile snapshot not written", metadata: ["error": "\(error)"])
            throw error
        }
        logger.info("profile store shut down; snapshot up to date")
    }

    /// Runs as a swift-service-lifecycle `Service`: waits, without polling, until the
    /// group shuts down gracefully (SIGTERM, SIGINT, …) or is cancelled, then awaits
    /// ``shutdown()``, so the final write completes before the group's `run()` returns
    /// and the process exits.
    public func run() async throws {
        // Cancellation ends the wait too, and the final write must run in both cases.
        try? await gracefulShutdown()
        try await shutdown()
    }
}

extension ProfileLoadResult {
    /// A word for logs, without the profile.
    var kind: String {
        switch self {
        case .none: "none"
        case .loaded: "loaded"
        case .migrated: "migrated"
        case .discarded: "discarded"
        case .unreadable: "unreadable"
        }
    }
}
