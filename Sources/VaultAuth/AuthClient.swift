import Foundation
import Logging

/// Sends HTTP requests with a bearer token, and keeps the token valid: refreshes it before
/// it expires and when the server answers 401, one refresh at a time, persisting rotated
/// tokens to the vault before anyone uses them.
///
/// For example:
///
/// ```swift
/// let store = TokenStore(vault: vault, issuer: "https://auth.example.com", account: "alice")
/// let client = try AuthClient(store: store, strategy: OAuth2RefreshStrategy(
///     tokenEndpoint: URL(string: "https://auth.example.com/oauth/token")!, client: .none(clientID: "cli")))
/// let response = try await client.send(HTTPRequest(url: URL(string: "https://api.example.com/me")!))
/// ```
///
/// The rules it keeps (see docs/AUTH.md for the sequence):
/// - At most one refresh runs at a time; every request that needs new tokens meanwhile
///   waits for that refresh and continues with its result.
/// - A 401 for a token that was already replaced is retried with the new token, without a
///   refresh. A request is retried at most once per refresh, and refreshes are capped per
///   time window, so a server that answers 401 to everything cannot cause a loop.
/// - New tokens are written to the vault before any caller sees them.
/// - A refused refresh is never repeated with the same credential: the strategy logs in
///   again without the user if it can, otherwise the client signs out.
/// - Network errors, 5xx and 429 keep the tokens.
/// - Each sign-in and sign-out starts a new session epoch; a refresh that lands in a later
///   epoch is discarded (and its tokens revoked), so a sign-out is never undone.
/// - Refreshes use the strategy with the raw transport, never ``send(_:)``.
public actor AuthClient {
    /// Tuning for an ``AuthClient``.
    public struct Configuration: Sendable {
        /// Refresh when the access token expires within this many seconds (capped at half the
        /// token's lifetime), to absorb latency and clock drift.
        public var refreshLeeway: TimeInterval = 60
        /// At most this many refreshes per ``refreshWindow``, whatever the server answers.
        public var maxRefreshesPerWindow = 6
        /// The window for ``maxRefreshesPerWindow``.
        public var refreshWindow: Duration = .seconds(60)
        /// The single-device session contract, if the server has one.
        public var session: SingleDeviceSession?
        /// The wall clock that decides expiry (replace it in tests). Tokens are stamped with
        /// `Date()` when they arrive, so a replacement must move with real time (an offset
        /// from `Date()`), not stand still.
        public var now: @Sendable () -> Date = { Date() }
        /// Where the client logs what it does; never a token.
        public var logger = Logger(label: "VaultAuth")

        public init() {}
    }

    /// The vault item the tokens live in.
    public nonisolated let store: TokenStore
    /// How tokens are refreshed and failures recognised.
    public nonisolated let strategy: any AuthStrategy
    /// The raw transport: used for requests (with a token added) and handed to the strategy.
    public nonisolated let transport: any HTTPTransport
    public nonisolated let configuration: Configuration

    private var tokens: TokenSet?
    /// The tokens in memory are newer than the vault's (a write failed); retried on each request.
    private var unpersisted = false
    private var epoch: UInt64 = 0
    private var signOutReason: SignOutReason = .neverSignedIn
    private var state: AuthState
    private var refresh: InFlightRefresh?
    private var nextRefreshID: UInt64 = 0
    /// Fingerprints (process-local hashes) of credentials the server refused; never presented again.
    private var refused: Set<Int> = []
    private var refreshStarts: [ContinuousClock.Instant] = []
    private var subscribers: [UUID: AsyncStream<AuthState>.Continuation] = [:]

    private struct InFlightRefresh {
        var id: UInt64
        var epoch: UInt64
        var task: Task<Result<TokenSet, AuthError>, Never>
    }

    private var logger: Logger { configuration.logger }

    /// Creates a client and loads the stored tokens, if any (signed in when there are).
    ///
    /// - Throws: ``TokenStoreError`` when the vault cannot be read.
    public init(store: TokenStore, strategy: any AuthStrategy, transport: any HTTPTransport = URLSessionTransport(),
                configuration: Configuration = Configuration()) throws(TokenStoreError) {
        self.store = store
        self.strategy = strategy
        self.transport = transport
        self.configuration = configuration
        let stored = try store.load()
        self.tokens = stored
        self.state = stored == nil ? .signedOut(.neverSignedIn) : .signedIn
    }

    // MARK: State

    /// The current state.
    public var currentState: AuthState { state }

    /// Whether tokens are present.
    public var isSignedIn: Bool { tokens != nil }

    /// A copy of the current tokens (for example to hand to another library); `nil` when signed out.
    public var currentTokens: TokenSet? { tokens }

    /// A stream of states, starting with the current one. Each call makes a new stream;
    /// it ends when the consumer stops iterating.
    public func states() -> AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        subscribers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
    }

    private func publish(_ newState: AuthState) {
        guard newState != state else { return }
        state = newState
        for continuation in subscribers.values { continuation.yield(newState) }
    }

    // MARK: Signing in and out

    /// Signs in with tokens obtained elsewhere (an authorization-code flow, a login form):
    /// stores them, then claims the single-device session if one is configured.
    ///
    /// Starts a new session epoch: a refresh still in flight for earlier tokens is discarded.
    ///
    /// - Throws: ``AuthError/storage(_:)`` if the tokens cannot be stored (the client stays
    ///   signed out), ``AuthError/loggedInOnAnotherDevice`` if the session is held elsewhere.
    public func signIn(with newTokens: TokenSet) async throws(AuthError) {
        do {
            try store.save(newTokens)
        } catch {
            throw .storage(error)
        }
        epoch &+= 1
        tokens = newTokens
        unpersisted = false
        refresh = nil
        publish(.signedIn)
        logger.info("signed in", metadata: ["issuer": "\(store.issuer)"])
        if configuration.session != nil, newTokens.sessionID == nil {
            try await claimSession()
        }
    }

    /// Signs in through the strategy's login without the user (stored credentials).
    ///
    /// - Throws: ``AuthError/signedOut(_:)`` with ``SignOutReason/reloginRefused(_:)`` when
    ///   the server refuses, ``AuthError/transient(_:)``, and the errors of ``signIn(with:)``.
    public func signIn() async throws(AuthError) {
        let fresh: TokenSet
        do {
            fresh = try await strategy.relogin(transport: transport)
        } catch {
            switch error {
            case .transient(let reason): throw .transient(reason)
            case .refused(let code): throw .signedOut(.reloginRefused(code))
            case .unsupported: throw .signedOut(.reloginRefused("unsupported"))
            case .sessionTakenOver: throw .loggedInOnAnotherDevice
            }
        }
        try await signIn(with: fresh)
    }

    /// Signs out: forgets and deletes the tokens at once (a refresh still in flight is
    /// discarded when it lands), then releases the single-device session and revokes the
    /// tokens at the server, best effort.
    ///
    /// - Throws: ``AuthError/storage(_:)`` if the vault item could not be deleted; the
    ///   client is signed out in memory regardless.
    public func signOut() async throws(AuthError) {
        let old = tokens
        let storageError = endSession(.userSignedOut)
        if let old {
            // A refresh made only to release the lease rotated the refresh token: revoke the new one.
            let last = await releaseLease(of: old) ?? old
            await strategy.revoke(last, transport: transport)
        }
        if let storageError { throw .storage(storageError) }
    }

    /// Forgets the tokens, bumps the epoch and deletes the vault item; returns a storage error, if any.
    @discardableResult
    private func endSession(_ reason: SignOutReason) -> TokenStoreError? {
        epoch &+= 1
        tokens = nil
        unpersisted = false
        refresh = nil
        signOutReason = reason
        publish(.signedOut(reason))
        logger.notice("signed out", metadata: ["reason": "\(reason)"])
        do {
            try store.clear()
            return nil
        } catch {
            logger.error("could not delete stored tokens", metadata: ["error": "\(error)"])
            return error
        }
    }

    // MARK: Sending requests

    /// Sends `request` with `Authorization: <type> <access token>`, refreshing first if the
    /// token is about to expire, and once more (then retrying once) if the server answers 401.
    ///
    /// Any status other than a rejected token comes back as a response.
    ///
    /// - Throws: ``AuthError``: `signedOut` when there are no tokens or a refresh was refused
    ///   with no way back, `transient` for network failures, `unauthorized` when a fresh
    ///   token is rejected too, `sessionTakenOver`, `refreshLimitReached`, `tokensNotPersisted`.
    public func send(_ request: HTTPRequest) async throws(AuthError) -> HTTPResponse {
        var current = try await usableTokens()
        var refreshedForThisRequest = false
        // Original, one retry with a token someone else replaced, one retry after our refresh.
        for _ in 0..<3 {
            let sentEpoch = epoch
            let response: HTTPResponse
            do {
                response = try await transport.send(authorized(request, with: current))
            } catch is CancellationError {
                throw .transient("cancelled")
            } catch let error as URLError where error.code == .cancelled {
                throw .transient("cancelled")
            } catch {
                throw .transient("network error")
            }
            switch strategy.authFailure(in: response, for: request) {
            case .none:
                return response
            case .sessionTakenOver:
                if sentEpoch == epoch, tokens != nil {
                    endSession(.sessionTakenOver)
                }
                throw .sessionTakenOver
            case .tokenRejected:
                guard sentEpoch == epoch, let latest = tokens else {
                    throw tokens == nil ? .signedOut(signOutReason) : .sessionChanged
                }
                if latest.accessToken != current.accessToken {
                    current = latest
                    continue
                }
                if refreshedForThisRequest {
                    logger.warning("fresh token rejected too", metadata: ["request": "\(request)"])
                    throw .unauthorized
                }
                refreshedForThisRequest = true
                current = try await refreshed(replacing: current)
            }
        }
        throw .unauthorized
    }

    /// Refreshes now, whatever the expiry (or joins the refresh in flight).
    public func refreshNow() async throws(AuthError) {
        guard let current = tokens else { throw .signedOut(signOutReason) }
        _ = try await refreshed(replacing: current)
    }

    private func authorized(_ request: HTTPRequest, with tokens: TokenSet) -> HTTPRequest {
        var request = request
        request.setHeader("Authorization", tokens.authorizationHeader)
        return request
    }

    /// The tokens to send with: waits for a refresh in flight, refreshes proactively near expiry.
    private func usableTokens() async throws(AuthError) -> TokenSet {
        if let inFlight = refresh, inFlight.epoch == epoch {
            return try await inFlight.task.value.get()
        }
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if unpersisted {
            do {
                try store.save(current)
                unpersisted = false
            } catch {
                logger.warning("tokens still not persisted", metadata: ["error": "\(error)"])
            }
        }
        guard current.expires(within: configuration.refreshLeeway, at: configuration.now()) else { return current }
        do {
            return try await refreshed(replacing: current)
        } catch .transient(let reason) where !current.isExpired(at: configuration.now()) {
            // Not expired yet: try the old token rather than fail the request.
            logger.info("proactive refresh failed, using the current token", metadata: ["reason": "\(reason)"])
            return current
        }
    }

    /// Tokens newer than `stale`: the current ones if someone already replaced `stale`, the
    /// result of the refresh in flight, or of a new refresh.
    private func refreshed(replacing stale: TokenSet) async throws(AuthError) -> TokenSet {
        if let inFlight = refresh, inFlight.epoch == epoch {
            return try await inFlight.task.value.get()
        }
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if current.accessToken != stale.accessToken { return current }

        let now = ContinuousClock.now
        refreshStarts.removeAll { now - $0 >= configuration.refreshWindow }
        guard refreshStarts.count < configuration.maxRefreshesPerWindow else {
            logger.warning("refresh limit reached")
            throw .refreshLimitReached
        }
        refreshStarts.append(now)

        nextRefreshID &+= 1
        let id = nextRefreshID
        let startEpoch = epoch
        let task = Task { await self.performRefresh(of: current, id: id, epoch: startEpoch) }
        refresh = InFlightRefresh(id: id, epoch: startEpoch, task: task)
        return try await task.value.get()
    }

    private func fingerprint(_ tokens: TokenSet) -> Int {
        var hasher = Hasher()
        hasher.combine(tokens.refreshToken ?? tokens.accessToken)
        return hasher.finalize()
    }

    /// The one refresh in flight. Runs on the actor between its suspension points.
    private func performRefresh(of held: TokenSet, id: UInt64, epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        defer {
            if refresh?.id == id { refresh = nil }
        }
        publish(.refreshing)
        logger.debug("refresh started")

        // Another process sharing the vault may have refreshed already, which made our
        // refresh token stale (rotation): use its tokens, or at least its refresh token.
        var current = held
        if !unpersisted, let stored = try? store.load(), stored != held {
            if !stored.expires(within: configuration.refreshLeeway, at: configuration.now()), !refused.contains(fingerprint(stored)) {
                logger.info("using tokens refreshed by another process")
                tokens = stored
                publish(.signedIn)
                return .success(stored)
            }
            current = stored
        }

        let outcome: Result<TokenSet, StrategyError>
        if refused.contains(fingerprint(current)) {
            outcome = .failure(.refused("previously refused"))
        } else {
            do {
                outcome = .success(try await strategy.refresh(current, transport: transport))
            } catch {
                outcome = .failure(error)
            }
        }
        if let discarded = superseded(since: startEpoch, outcome) { return .failure(discarded) }

        switch outcome {
        case .success(let fresh):
            logger.info("tokens refreshed")
            return adopt(fresh, replacing: current)
        case .failure(.transient(let reason)):
            logger.warning("refresh failed for now, tokens kept", metadata: ["reason": "\(reason)"])
            publish(.signedIn)
            return .failure(.transient(reason))
        case .failure(.sessionTakenOver):
            endSession(.sessionTakenOver)
            return .failure(.sessionTakenOver)
        case .failure(.refused(let code)):
            return await refusedRefresh(code, replacing: current, epoch: startEpoch)
        case .failure(.unsupported):
            return await refusedRefresh("unsupported", replacing: current, epoch: startEpoch)
        }
    }

    private func refusedRefresh(_ code: String, replacing current: TokenSet, epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        logger.notice("refresh refused", metadata: ["code": "\(code)"])
        refused.insert(fingerprint(current))
        return await fallback(after: code, replacing: current, epoch: startEpoch)
    }

    /// After a refused refresh: log in again without the user if the strategy can, else sign out.
    private func fallback(after code: String, replacing current: TokenSet, epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        guard strategy.canRelogin else {
            endSession(.refreshRefused(code))
            return .failure(.signedOut(.refreshRefused(code)))
        }
        let outcome: Result<TokenSet, StrategyError>
        do {
            outcome = .success(try await strategy.relogin(transport: transport))
        } catch {
            outcome = .failure(error)
        }
        if let discarded = superseded(since: startEpoch, outcome) { return .failure(discarded) }
        switch outcome {
        case .success(let fresh):
            logger.info("logged in again after a refused refresh")
            return adopt(fresh, replacing: current)
        case .failure(.transient(let reason)):
            publish(.signedIn)
            return .failure(.transient(reason))
        case .failure(.sessionTakenOver):
            endSession(.loggedInOnAnotherDevice)
            return .failure(.loggedInOnAnotherDevice)
        case .failure(.refused(let reloginCode)):
            endSession(.reloginRefused(reloginCode))
            return .failure(.signedOut(.reloginRefused(reloginCode)))
        case .failure(.unsupported):
            endSession(.refreshRefused(code))
            return .failure(.signedOut(.refreshRefused(code)))
        }
    }

    /// If the session changed while the strategy worked, the error for the waiters; new
    /// tokens from that stale refresh are revoked, not kept.
    private func superseded(since startEpoch: UInt64, _ outcome: Result<TokenSet, StrategyError>) -> AuthError? {
        guard startEpoch != epoch else { return nil }
        logger.info("discarding a refresh result from an ended session")
        if case .success(let orphan) = outcome {
            let strategy = self.strategy, transport = self.transport
            Task { await strategy.revoke(orphan, transport: transport) }
        }
        return tokens == nil ? .signedOut(signOutReason) : .sessionChanged
    }

    /// Persists `fresh`, then makes it current: callers see new tokens only once they are durable.
    private func adopt(_ fresh: TokenSet, replacing current: TokenSet) -> Result<TokenSet, AuthError> {
        var fresh = fresh
        if fresh.sessionID == nil { fresh.sessionID = current.sessionID }
        do {
            try store.save(fresh)
            unpersisted = false
        } catch {
            // The old refresh token is likely dead already (rotation): keep the new ones in
            // memory rather than lose them, hand them to the caller, retry the write later.
            logger.error("refreshed tokens could not be persisted", metadata: ["error": "\(error)"])
            tokens = fresh
            unpersisted = true
            publish(.signedIn)
            return .failure(.tokensNotPersisted(fresh, error))
        }
        tokens = fresh
        publish(.signedIn)
        return .success(fresh)
    }

    // MARK: Single-device session support (see SingleDeviceSession.swift)

    /// Increases at every sign-in and sign-out.
    var sessionEpoch: UInt64 { epoch }

    /// Stores the session id in the current tokens, if the session did not change meanwhile.
    func recordSessionID(_ sessionID: String?, epoch expected: UInt64) throws(AuthError) {
        guard expected == epoch, var updated = tokens else { throw .sessionChanged }
        updated.sessionID = sessionID
        do {
            try store.save(updated)
        } catch {
            tokens = updated
            unpersisted = true
            throw .tokensNotPersisted(updated, error)
        }
        tokens = updated
    }

    /// The server refused the session claim: sign out and revoke the tokens just obtained.
    func refuseLogin(_ refusedTokens: TokenSet) async {
        endSession(.loggedInOnAnotherDevice)
        await strategy.revoke(refusedTokens, transport: transport)
    }

    /// Releases the lease held by tokens that were just signed out, with the raw transport.
    /// If the server rejects the last access token, one refresh (also raw, never persisted:
    /// the new tokens are only used for this and then revoked by the caller) gets a token to
    /// release with, so a sign-out frees the account for other devices at once.
    private func releaseLease(of old: TokenSet) async -> TokenSet? {
        guard let session = configuration.session, let sessionID = old.sessionID else { return nil }
        var request = HTTPRequest(method: "DELETE", url: session.url(of: sessionID))
        request.setHeader("Authorization", old.authorizationHeader)
        guard let response = try? await transport.send(request),
              strategy.authFailure(in: response, for: request) == .tokenRejected,
              old.refreshToken != nil,
              let fresh = try? await strategy.refresh(old, transport: transport) else { return nil }
        request.setHeader("Authorization", fresh.authorizationHeader)
        _ = try? await transport.send(request)
        return fresh
    }
}
