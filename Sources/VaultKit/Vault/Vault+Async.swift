import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `async` twin of every blocking call, GRDB style: same name, same arguments, same
/// errors, and the blocking work (SQLite, fsync, Argon2id) runs on threads the vault
/// owns, never on the caller's thread, so Swift's cooperative pool and NIO event loops
/// are never blocked.
///
/// For example, in a server handler:
///
/// ```swift
/// let vault = try await Vault.open(at: path, key: key)
/// try await vault.set(token, service: "api.example.com", account: user)
/// let token = try await vault.string(service: "api.example.com", account: user)
/// ```
///
/// Each vault has one serial queue for its async calls (they share its one connection
/// anyway); creating and opening, which run Argon2id for up to seconds, use a new serial
/// queue per call. Both are dispatch queues that get threads of their own instead of
/// borrowing the cooperative pool's. A call whose task is cancelled while it waits for
/// its turn on the queue does nothing and throws ``VaultError/cancelled`` (or
/// `CancellationError` from the calls that take a closure of yours); one that has
/// started completes, so a write is never abandoned halfway. ``close()`` always runs.
///
/// A task already running on the vault's queue (one that prefers ``Vault/executor``)
/// has nothing to hop to: its calls run their work inline, in the same serial order.
extension Vault {
    // MARK: Creating and opening

    public static func create(at path: String, passphrase: String, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try create(at: path, passphrase: passphrase, kdf: kdf, busyTimeout: busyTimeout) }
    }

    public static func create(at path: String, passphrase: SecretBytes, kdf: KDFParameters = .moderate, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try create(at: path, passphrase: passphrase, kdf: kdf, busyTimeout: busyTimeout) }
    }

    public static func create(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try create(at: path, key: key, busyTimeout: busyTimeout) }
    }

    public static func open(at path: String, passphrase: String, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(at: path, passphrase: passphrase, busyTimeout: busyTimeout) }
    }

    public static func open(at path: String, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(at: path, passphrase: passphrase, busyTimeout: busyTimeout) }
    }

    public static func open(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try open(at: path, key: key, busyTimeout: busyTimeout) }
    }

    public static func upgrade(at path: String, passphrase: SecretBytes, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try upgrade(at: path, passphrase: passphrase, busyTimeout: busyTimeout) }
    }

    public static func upgrade(at path: String, key: VaultKey, busyTimeout: Duration = defaultBusyTimeout) async throws(VaultError) -> Vault {
        try await offPoolOpening { () throws(VaultError) in try upgrade(at: path, key: key, busyTimeout: busyTimeout) }
    }

    // MARK: Writing

    public func set(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) async throws(VaultError) {
        let secret = secret.secretBytes
        try await offPool { () throws(VaultError) in try self.set(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory) }
    }

    public func add(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) async throws(VaultError) {
        let secret = secret.secretBytes
        try await offPool { () throws(VaultError) in try self.add(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory) }
    }

    public func update(_ secret: some SecretBytesConvertible, service: String, account: String, label: String? = nil, generic: Data? = nil, keepHistory: Bool = true) async throws(VaultError) {
        let secret = secret.secretBytes
        try await offPool { () throws(VaultError) in try self.update(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory) }
    }

    @discardableResult
    public func delete(service: String, account: String, keepHistory: Bool = true) async throws(VaultError) -> Bool {
        try await offPool { () throws(VaultError) in try self.delete(service: service, account: account, keepHistory: keepHistory) }
    }

    @discardableResult
    public func deleteAll(service: String, keepHistory: Bool = true) async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.deleteAll(service: service, keepHistory: keepHistory) }
    }

    /// ``batch(_:)`` off the caller's thread: `body` runs on the vault's queue, in one
    /// transaction; the caller's own error comes back unchanged.
    public func batch(_ body: @escaping @Sendable (VaultBatch) throws -> Void) async throws {
        try await offPool { try self.batch(body) }
    }

    // MARK: Reading

    public func secret(service: String, account: String) async throws(VaultError) -> SecretBytes {
        try await offPool { () throws(VaultError) in try self.secret(service: service, account: account) }
    }

    public func string(service: String, account: String) async throws(VaultError) -> String {
        try await offPool { () throws(VaultError) in try self.string(service: service, account: account) }
    }

    public func data(service: String, account: String) async throws(VaultError) -> Data {
        try await offPool { () throws(VaultError) in try self.data(service: service, account: account) }
    }

    public func item(service: String, account: String) async throws(VaultError) -> VaultItem {
        try await offPool { () throws(VaultError) in try self.item(service: service, account: account) }
    }

    @available(*, deprecated, message: "use entry(service:account:), which returns a VaultEntry, or nil when the item is missing")
    public func itemWithSecret(service: String, account: String) async throws(VaultError) -> (item: VaultItem, secret: SecretBytes) {
        let pair = try await offPool { () throws(VaultError) in try ItemWithSecret(self.itemWithSecret(service: service, account: account)) }
        return (pair.item, pair.secret)
    }

    public func contains(service: String, account: String) async throws(VaultError) -> Bool {
        try await offPool { () throws(VaultError) in try self.contains(service: service, account: account) }
    }

    public func items(service: String? = nil) async throws(VaultError) -> [VaultItem] {
        try await offPool { () throws(VaultError) in try self.items(service: service) }
    }

    // MARK: History

    public func history(service: String, account: String) async throws(VaultError) -> [VaultItemVersion] {
        try await offPool { () throws(VaultError) in try self.history(service: service, account: account) }
    }

    public func itemWithSecret(service: String, account: String, version: UInt64) async throws(VaultError) -> (item: VaultItem, secret: SecretBytes) {
        let pair = try await offPool { () throws(VaultError) in try ItemWithSecret(self.itemWithSecret(service: service, account: account, version: version)) }
        return (pair.item, pair.secret)
    }

    public func restore(service: String, account: String, version: UInt64) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.restore(service: service, account: account, version: version) }
    }

    @discardableResult
    public func purgeHistory(service: String, account: String) async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.purgeHistory(service: service, account: account) }
    }

    @discardableResult
    public func purgeHistory() async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.purgeHistory() }
    }

    public func changes(limit: Int? = nil) async throws(VaultError) -> [VaultChange] {
        try await offPool { () throws(VaultError) in try self.changes(limit: limit) }
    }

    public func historyRetention() async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.historyRetention() }
    }

    public func setHistoryRetention(_ versions: Int) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.setHistoryRetention(versions) }
    }

    public func writer() async throws(VaultError) -> String {
        try await offPool { () throws(VaultError) in try self.writer() }
    }

    public func declareWriter(_ name: String) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.declareWriter(name) }
    }

    // MARK: Keys, checks, copies

    public func changePassphrase(to passphrase: String, kdf: KDFParameters = .moderate) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.changePassphrase(to: passphrase, kdf: kdf) }
    }

    public func changePassphrase(to passphrase: SecretBytes, kdf: KDFParameters = .moderate) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.changePassphrase(to: passphrase, kdf: kdf) }
    }

    public func changeKey(to key: VaultKey) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.changeKey(to: key) }
    }

    public func rekey() async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.rekey() }
    }

    public func rekey(changingPassphraseTo passphrase: SecretBytes, kdf: KDFParameters = .moderate) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.rekey(changingPassphraseTo: passphrase, kdf: kdf) }
    }

    @discardableResult
    public func verify() async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.verify() }
    }

    @discardableResult
    public func backup(to path: String) async throws(VaultError) -> Int {
        try await offPool { () throws(VaultError) in try self.backup(to: path) }
    }

    public func useRollbackGuard(_ rollbackGuard: RollbackGuard, acceptingCurrentState: Bool = false) async throws(VaultError) {
        try await offPool { () throws(VaultError) in try self.useRollbackGuard(rollbackGuard, acceptingCurrentState: acceptingCurrentState) }
    }

    public func changeToken() async throws(VaultError) -> VaultChangeToken {
        try await offPool { () throws(VaultError) in try self.changeToken() }
    }

    /// ``withSecret(service:account:_:)`` off the caller's thread: `body` runs on the
    /// vault's queue while the secret is in protected memory.
    public func withSecret<Result: Sendable>(service: String, account: String, _ body: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Result) async throws -> Result {
        try await offPool { try self.withSecret(service: service, account: account, body) }
    }

    /// ``close()`` off the caller's thread: closing may checkpoint the write-ahead log.
    public func close() async {
        await offPoolEvenIfCancelled { self.close() }
    }

    // MARK: Plumbing

    /// Runs `work` on this vault's queue and waits for it without blocking the caller's
    /// thread; inline when the caller's task is on that queue already (``executor``).
    /// Skipped, with ``VaultError/cancelled``, when the task is cancelled before its turn.
    func offPool<Result: Sendable>(_ work: @escaping @Sendable () throws(VaultError) -> Result) async throws(VaultError) -> Result {
        if executor.isCurrent { return try work() }
        return try await VaultQueues.run(on: executor.queue, unlessCancelledThrowing: .cancelled, work)
    }

    /// ``offPool(_:)`` for work around a caller's closure, which may throw any error:
    /// skipped with `CancellationError` when the task is cancelled before its turn.
    func offPool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        if executor.isCurrent { return try work() }
        return try await VaultQueues.run(on: executor.queue, unlessCancelledThrowing: CancellationError(), work)
    }

    /// ``offPool(_:)`` for work that runs even when the task is cancelled.
    func offPoolEvenIfCancelled(_ work: @escaping @Sendable () -> Void) async {
        if executor.isCurrent { return work() }
        await VaultQueues.run(on: executor.queue, work)
    }
}

/// A tuple is not `Sendable`-checked across the continuation; this pair is.
private struct ItemWithSecret: Sendable {
    let item: VaultItem
    let secret: SecretBytes
    init(_ pair: (item: VaultItem, secret: SecretBytes)) { (item, secret) = pair }
}
