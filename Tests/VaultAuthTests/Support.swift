import Foundation
import Synchronization
import TestSupport
import VaultAuth
import VaultKit

/// One test's world: a real server on 127.0.0.1, a vault in a fresh directory, and
/// clients wired to both with the URLSession transport.
struct AuthFixture {
    let server: TestAuthServer
    let directory: String
    let vaultPath: String
    let vaultKey: VaultKey
    let vault: Vault
    let clock: TestClock

    static func make(_ label: String = #function, configure: (inout TestAuthServer.State) -> Void = { _ in }) async throws -> AuthFixture {
        let clock = TestClock()
        let server = try await TestAuthServer.start(clock: clock, configure: configure)
        let directory = TestPaths.temporaryDirectory(label)
        let key = VaultKey.random()
        let path = "\(directory)/auth.vault"
        let vault = try await Vault.create(at: path, key: key)
        return AuthFixture(server: server, directory: directory, vaultPath: path, vaultKey: key, vault: vault, clock: clock)
    }

    var issuer: String { server.baseURL.absoluteString }

    func store(account: String = "alice") -> TokenStore {
        TokenStore(vault: vault, issuer: issuer, account: account)
    }

    func credentials(account: String = "alice") -> CredentialStore {
        CredentialStore(vault: vault, issuer: issuer, account: account)
    }

    func oauthStrategy(relogin: Bool = false, account: String = "alice") -> OAuth2RefreshStrategy {
        OAuth2RefreshStrategy(
            tokenEndpoint: server.tokenURL, client: .none(clientID: "vaultauth-tests"), revocationEndpoint: server.revokeURL,
            fallback: relogin ? credentialsStrategy(account: account) : nil)
    }

    func credentialsStrategy(account: String = "alice") -> StoredCredentialsStrategy {
        StoredCredentialsStrategy(tokenEndpoint: server.tokenURL, client: .none(clientID: "vaultauth-tests"), credentials: credentials(account: account))
    }

    func configuration(session device: String? = nil, leeway: TimeInterval = 60, maxRefreshes: Int = 6) -> AuthClient.Configuration {
        var configuration = AuthClient.Configuration()
        configuration.logger.logLevel = .critical
        configuration.refreshLeeway = leeway
        configuration.maxRefreshesPerWindow = maxRefreshes
        let clock = self.clock
        configuration.now = { clock.now() }
        if let device {
            configuration.session = SingleDeviceSession(endpoint: server.sessionsURL, deviceID: device, keepAliveInterval: .seconds(3600), releaseTimeout: .seconds(10))
        }
        return configuration
    }

    /// A client for `account`, signed in with a password login made through the strategy.
    func signedInClient(account: String = "alice", password: String? = nil, strategy: (any AuthStrategy)? = nil,
                        configuration: AuthClient.Configuration? = nil, transport: (any HTTPTransport)? = nil) async throws -> AuthClient {
        let users = server.state.withLock { $0.users }
        try credentials(account: account).save(password: password ?? users[account]!)
        let client = try AuthClient(store: store(account: account), strategy: strategy ?? oauthStrategy(account: account),
                                    transport: transport ?? URLSessionTransport(),
                                    configuration: configuration ?? self.configuration())
        let tokens = try await credentialsStrategy(account: account).relogin(transport: URLSessionTransport())
        try await client.signIn(with: tokens)
        return client
    }

    var resource: HTTPRequest { HTTPRequest(url: server.resourceURL) }
}

/// Runs `body`, failing with `TimeoutError` if it takes longer than `seconds`: every wait
/// for an event in these tests is bounded.
func withTimeout<T: Sendable>(_ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimeoutError()
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

struct TimeoutError: Error {}

/// A one-shot event: `signal()` once, `wait()` from any number of tasks. A cancelled
/// waiter stops waiting, so a bounded wait never hangs on an event that does not come.
final class Event: Sendable {
    private struct State {
        var fired = false
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var isSignaled: Bool { state.withLock { $0.fired } }

    func wait() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Waits at most `seconds`; returns whether the event fired.
    func wait(seconds: Double) async -> Bool {
        _ = try? await withTimeout(seconds) { await self.wait() }
        return isSignaled
    }
}

/// Collects an ``AuthClient``'s published states.
final class StateRecorder: Sendable {
    private final class Seen: Sendable { let states = Mutex<[AuthState]>([]) }
    private let seen = Seen()
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ client: AuthClient) async {
        let stream = await client.states()
        task.withLock { $0 = Task { [seen] in for await state in stream { seen.states.withLock { $0.append(state) } } } }
    }

    var states: [AuthState] { seen.states.withLock { $0 } }

    /// Waits until `predicate` holds for a recorded state.
    func wait(for predicate: @escaping @Sendable (AuthState) -> Bool, seconds: Double = 30) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if states.contains(where: predicate) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    deinit { task.withLock { $0?.cancel() } }
}

/// Runs a blocking call off the cooperative thread pool (which has as many threads as
/// cores, two here), so waiting for a child process never starves the server or clients.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// A value behind a lock, shareable between tasks and closures.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
