public import Configuration
import Dispatch
import Foundation
public import Logging
import Synchronization
public import VaultKit

/// A swift-configuration provider whose values are the items of one vault service.
///
/// Keys map to items as: service = the provider's `service`, account = the key's
/// components joined with dots. So with `service: "com.example.api"`,
/// `config.string(forKey: "database.password")` reads the item
/// (`com.example.api`, `database.password`), which `vault set com.example.api database.password`
/// writes. Every value is marked secret, so the access logger and descriptions redact it.
/// How secrets are read as ints, bools, arrays and bytes: see the README section and
/// ``VaultConfigError``.
///
/// The provider keeps the service's items in memory: `value(forKey:type:)` and
/// `snapshot()` read that copy. `fetchValue` first re-reads the vault if it changed.
/// Run the provider as a swift-service-lifecycle `Service` to watch: it polls the
/// vault's `VaultChangeToken` (one header read) every `pollInterval`, and on a change,
/// by this or another process, reloads the items and updates the watchers of the keys
/// whose values changed. Vault work runs on the provider's own dispatch queue, never on
/// the Swift concurrency pool.
///
/// ```swift
/// let provider = try await VaultConfigProvider(vault: vault, service: "com.example.api")
/// let config = ConfigReader(providers: [EnvironmentVariablesProvider(), provider])
/// let group = ServiceGroup(services: [provider, server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// ```
@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
public final class VaultConfigProvider: Sendable {
    /// The vault service whose items are the configuration values.
    public let service: String
    /// How often ``run()`` checks the vault for changes.
    public let pollInterval: Duration

    let vault: Vault
    let logger: Logger
    /// Serialises every vault call of this provider, off the concurrency pool.
    private let queue: DispatchQueue
    private let storage: Mutex<Storage>

    struct Storage {
        var snapshot: VaultConfigSnapshot
        var token: VaultChangeToken
        var valueWatchers: [String: [UUID: AsyncStream<VaultConfigSnapshot>.Continuation]] = [:]
        var snapshotWatchers: [UUID: AsyncStream<VaultConfigSnapshot>.Continuation] = [:]
    }

    /// Loads the items of `service` from `vault`.
    ///
    /// - Parameters:
    ///   - vault: an open vault; the provider does not close it.
    ///   - service: the vault service holding the values.
    ///   - pollInterval: how often the running service checks for changes.
    ///   - logger: where failed reloads are reported (without values).
    /// - Throws: `VaultError` from reading the vault.
    public init(vault: Vault, service: String, pollInterval: Duration = .seconds(5), logger: Logger = Logger(label: "VaultConfiguration")) async throws {
        self.vault = vault
        self.service = service
        self.pollInterval = pollInterval
        self.logger = logger
        let queue = DispatchQueue(label: "VaultConfiguration.\(service)")
        self.queue = queue
        let name = "VaultConfigProvider[\(service)]"
        let (token, secrets) = try await Self.onQueue(queue) { () throws(VaultError) in try Self.load(vault, service: service) }
        storage = Mutex(Storage(snapshot: VaultConfigSnapshot(providerName: name, secrets: secrets), token: token))
    }

    // MARK: Reading the vault

    /// The change token, then the secrets: a write between the two is caught by the next check.
    private static func load(_ vault: Vault, service: String) throws(VaultError) -> (VaultChangeToken, [String: SecretBytes]) {
        let token = try vault.changeToken()
        var secrets: [String: SecretBytes] = [:]
        for item in try vault.items(service: service) {
            // nil: deleted since the listing.
            secrets[item.account] = try vault.entry(service: service, account: item.account)?.secret
        }
        return (token, secrets)
    }

    /// Reloads the items if the vault changed since the last load, and updates watchers.
    func reloadIfChanged() async throws {
        let vault = vault, service = service, known = storage.withLock { $0.token }
        let loaded = try await Self.onQueue(queue) { () throws(VaultError) -> (VaultChangeToken, [String: SecretBytes])? in
            guard try vault.changeToken() != known else { return nil }
            return try Self.load(vault, service: service)
        }
        guard let (token, secrets) = loaded else { return }
        apply(secrets, token: token)
    }

    private func apply(_ secrets: [String: SecretBytes], token: VaultChangeToken) {
        var notifications: [(AsyncStream<VaultConfigSnapshot>.Continuation, VaultConfigSnapshot)] = []
        storage.withLock { storage in
            storage.token = token
            let old = storage.snapshot
            guard old.secrets != secrets else { return }
            let new = VaultConfigSnapshot(providerName: old.providerName, secrets: secrets)
            storage.snapshot = new
            for (account, watchers) in storage.valueWatchers where old.secrets[account] != secrets[account] {
                notifications += watchers.values.map { ($0, new) }
            }
            notifications += storage.snapshotWatchers.values.map { ($0, new) }
        }
        for (continuation, snapshot) in notifications { continuation.yield(snapshot) }
    }

    /// Runs blocking vault work on `queue` and resumes the caller when it is done.
    private static func onQueue<Result: Sendable>(
        _ queue: DispatchQueue,
        _ work: @escaping @Sendable () throws(VaultError) -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { () throws(VaultError) in try work() }) }
        }
    }
}

// MARK: - ConfigProvider

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension VaultConfigProvider: ConfigProvider {
    public var providerName: String { storage.withLock { $0.snapshot.providerName } }

    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try storage.withLock { $0.snapshot }.value(forKey: key, type: type)
    }

    public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try await reloadIfChanged()
        return try value(forKey: key, type: type)
    }

    public func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        let account = VaultConfigSnapshot.account(for: key)
        let (stream, continuation) = AsyncStream<VaultConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        storage.withLock { storage in
            storage.valueWatchers[account, default: [:]][id] = continuation
            continuation.yield(storage.snapshot)
        }
        defer { storage.withLock { _ = $0.valueWatchers[account]?.removeValue(forKey: id) } }
        let results = stream.map { snapshot -> Result<LookupResult, any Error> in
            Result { try snapshot.value(forKey: key, type: type) }
        }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(results))
    }

    public func snapshot() -> any ConfigSnapshot {
        storage.withLock { $0.snapshot }
    }

    public func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        let (stream, continuation) = AsyncStream<VaultConfigSnapshot>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        storage.withLock { storage in
            storage.snapshotWatchers[id] = continuation
            continuation.yield(storage.snapshot)
        }
        defer { storage.withLock { _ = $0.snapshotWatchers.removeValue(forKey: id) } }
        return try await updatesHandler(ConfigUpdatesAsyncSequence(stream.map { $0 as any ConfigSnapshot }))
    }
}
