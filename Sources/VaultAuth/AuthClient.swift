import Foundation
import Logging

/// Sends HTTP requests with a bearer token, and keeps the token valid: refreshes it before
/// it expires and when the server rejects it, one refresh at a time across every process
/// sharing the vault, persisting rotated tokens to the vault before anyone uses them.
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
/// - At most one refresh runs at a time for a vault file, across processes: reading the
///   vault, the token request and writing the vault happen under one lock (a lock file beside
///   the vault). A client that waited for it reads the vault and uses the tokens the winner
///   stored instead of refreshing again.
/// - Inside a process every request that needs new tokens waits for the one refresh in flight.
/// - A rejected token that was already replaced is retried with the new token, without a
///   refresh. A request is retried at most once per refresh, and early refreshes (of tokens
///   not yet due) are capped per window, so a server that rejects everything cannot cause a loop.
/// - New tokens are written to the vault before any caller sees them.
/// - A refused refresh (`invalid_grant`) is never repeated with the same credential: the
///   strategy logs in again without the user if it can, otherwise the client signs out and
///   deletes the tokens only if the vault still holds the refused ones.
/// - A configuration error (`invalid_client`, ...), network errors, 5xx and 429 keep the tokens.
/// - Each sign-in and sign-out starts a new session epoch; a refresh that lands in a later
///   epoch is discarded (and its tokens revoked), so a sign-out is never undone.
/// - Refreshes use the strategy with the raw transport, never ``send(_:)``.
public actor AuthClient {
    /// Tuning for an ``AuthClient``.
    public struct Configuration: Sendable {
        /// Refresh when the access token expires within this many seconds (capped at half the
        /// token's lifetime), to absorb latency and clock drift.
        public var refreshLeeway: TimeInterval = 60
        /// At most this many early refreshes per ``refreshWindow``, whatever the server answers.
        ///
        /// A refresh is early when the tokens are not due yet: the server rejected a token the
        /// client believed valid, or ``refreshNow()`` was called. Due refreshes (within the
        /// leeway of the expiry, of tokens that live at least ``minimumScheduledLifetime``) are
        /// the schedule the server asked for and are not counted, so short-lived tokens in
        /// normal use never hit the cap. The count starts again at each sign-in.
        public var maxRefreshesPerWindow = 6
        /// The window for ``maxRefreshesPerWindow``.
        public var refreshWindow: Duration = .seconds(60)
        /// Tokens that live shorter than this are always refreshed as early ones (counted), so a
        /// server that hands out already-expired tokens cannot make every request refresh unchecked.
        public var minimumScheduledLifetime: TimeInterval = 2
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
    /// Makes read-refresh-write one step for every process sharing the vault file.
    private nonisolated let refreshLock: RefreshLock

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
    /// Starts of early refreshes since the last sign-in, for the cap.
    private var earlyRefreshStarts: [ContinuousClock.Instant] = []
    private var subscribers: [UUID: AsyncStream<AuthState>.Continuation] = [:]
    private var eventSubscribers: [UUID: AsyncStream<AuthEvent>.Continuation] = [:]

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
        self.refreshLock = RefreshLock(vaultPath: store.vault.path)
        let stored = try store.load()
        self.tokens = stored
        self.state = stored == nil ? .signedOut(.neverSignedIn) : .signedIn
    }

    // MARK: State and events

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

    /// A stream of what the client does from now on (refreshes, refusals, lease changes), for
    /// metrics. Each call makes a new stream; it keeps the newest 256 events a slow consumer
    /// has not read, and ends when the consumer stops iterating.
    public func events() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthEvent.self, bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        eventSubscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        subscribers[id] = nil
        eventSubscribers[id] = nil
    }

    private func publish(_ newState: AuthState) {
        guard newState != state else { return }
        state = newState
        for continuation in subscribers.values { continuation.yield(newState) }
    }

    func emit(_ event: AuthEvent) {
        for continuation in eventSubscribers.values { continuation.yield(event) }
    }

    // MARK: Signing in and out

    /// Signs in with tokens obtained elsewhere (see ``OAuth2Grants`` and
    /// ``AuthorizationRequest``): stores them, then claims the single-device session if one is
    /// configured.
    ///
    /// Starts a new session epoch: a refresh still in flight for earlier tokens is discarded.
    /// The refresh cap starts counting again.
    ///
    /// - Throws: ``AuthError/storage(_:)`` if the tokens cannot be stored (the client keeps
    ///   what it had), ``AuthError/sessionChanged`` if another sign-in or a sign-out came first,
    ///   ``AuthError/loggedInOnAnotherDevice`` if the session is held elsewhere.
    public func signIn(with newTokens: TokenSet) async throws(AuthError) {
        // A new epoch before any suspension: a refresh in flight lands in an ended session.
        epoch &+= 1
        let signInEpoch = epoch
        refresh = nil
        do {
            let lease = try await refreshLock.acquire()
            defer { lease.release() }
            let store = self.store
            try await OffPool.run { () throws(TokenStoreError) in try store.save(newTokens) }
        } catch {
            throw .storage(error)
        }
        guard signInEpoch == epoch else { throw .sessionChanged }
        tokens = newTokens
        unpersisted = false
        refresh = nil
        earlyRefreshStarts = []
        publish(.signedIn)
        emit(.signedIn)
        logger.info("signed in", metadata: ["issuer": "\(store.issuer)"])
        if configuration.session != nil, newTokens.sessionID == nil {
            try await claimSession()
        }
    }

    /// Signs in through the strategy's login without the user (stored credentials).
    ///
    /// - Throws: ``AuthError/signedOut(_:)`` with ``SignOutReason/reloginRefused(_:)`` when
    ///   the server refuses, ``AuthError/configuration(_:)``, ``AuthError/transient(_:)``, and
    ///   the errors of ``signIn(with:)``.
    public func signIn() async throws(AuthError) {
        let fresh: TokenSet
        do {
            fresh = try await strategy.relogin(transport: transport)
        } catch {
            switch error {
            case .transient(let reason): throw .transient(reason)
            case .configuration(let code): throw .configuration(code)
            case .refused(let code): throw .signedOut(.reloginRefused(code))
            case .unsupported: throw .signedOut(.reloginRefused("unsupported"))
            case .sessionTakenOver: throw .loggedInOnAnotherDevice
            }
        }
        try await signIn(with: fresh)
    }

    /// Signs out: forgets the tokens at once (a refresh still in flight in this process is
    /// discarded when it lands), then, under the cross-process lock, reads what the vault
    /// holds at that moment and deletes it, then releases the single-device session and
    /// revokes those tokens at the server, best effort.
    ///
    /// The vault is read again because another process sharing it may have rotated the tokens
    /// since this one loaded them: revoking the copy in memory would leave the newest grant
    /// alive at the server. If a token request of another process is in flight, this waits
    /// for it (at most the transport's timeout) and revokes its result.
    ///
    /// - Throws: ``AuthError/storage(_:)`` if the vault item could not be deleted; the
    ///   client is signed out in memory regardless.
    public func signOut() async throws(AuthError) {
        let inMemory = tokens
        forget(.userSignedOut)
        var inVault: TokenSet?
        var storageError: TokenStoreError?
        do {
            let lease = try await refreshLock.acquire()
            defer { lease.release() }
            inVault = try await store.take()
        } catch {
            logger.error("could not delete stored tokens", metadata: ["error": "\(error)"])
            storageError = error
        }
        var revoking: [TokenSet] = inVault.map { [$0] } ?? []
        // Ours too if they differ: newer than the vault's when a write had failed.
        if let inMemory, !inMemory.sameCredential(as: inVault) { revoking.append(inMemory) }
        for (index, old) in revoking.enumerated() {
            // A refresh made only to release the lease rotated the refresh token: revoke the new one.
            let last = index == 0 ? (await releaseLease(of: old) ?? old) : old
            await strategy.revoke(last, transport: transport)
        }
        if let storageError { throw .storage(storageError) }
    }

    /// Forgets the tokens in memory and bumps the epoch, before any suspension point.
    private func forget(_ reason: SignOutReason) {
        epoch &+= 1
        tokens = nil
        unpersisted = false
        refresh = nil
        signOutReason = reason
        publish(.signedOut(reason))
        emit(.signedOut(reason))
        logger.notice("signed out", metadata: ["reason": "\(reason)"])
    }

    /// Forgets the tokens, then deletes `ended` from the vault only if it still holds it
    /// (compare-and-delete): newer tokens another process stored are never wiped.
    private func endSession(_ reason: SignOutReason, ending ended: TokenSet, lockHeld: Bool) async {
        forget(reason)
        do {
            let lease = lockHeld ? nil : try await refreshLock.acquire()
            defer { lease?.release() }
            if case .changed = try await store.delete(ifHolding: ended) {
                logger.info("the vault holds other tokens than the ended ones; left in place")
            }
        } catch {
            logger.error("could not delete stored tokens", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Sending requests

    /// Sends `request` with `Authorization: <type> <access token>`, refreshing first if the
    /// token is about to expire, and once more (then retrying once) if the server rejects the
    /// token (401, or the strategy's ``AuthStrategy/authFailure(in:for:)``).
    ///
    /// Any status other than a rejected token comes back as a response.
    ///
    /// - Throws: ``AuthError``: `signedOut` when there are no tokens or a refresh was refused
    ///   with no way back, `transient` for network failures, `configuration` when the token
    ///   endpoint refused the client, `unauthorized` when a fresh token is rejected too,
    ///   `sessionTakenOver`, `refreshLimitReached`, `tokensNotPersisted`, `storage`.
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
                if sentEpoch == epoch, let ended = tokens {
                    if configuration.session != nil { emit(.leaseLost) }
                    await endSession(.sessionTakenOver, ending: ended, lockHeld: false)
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

    /// Refreshes now, whatever the expiry (or joins the refresh in flight). Counts as an early
    /// refresh unless the tokens are due.
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
                let lease = try await refreshLock.acquire()
                defer { lease.release() }
                let store = self.store
                try await OffPool.run { () throws(TokenStoreError) in try store.save(current) }
                if tokens?.sameCredential(as: current) == true { unpersisted = false }
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

    /// Whether `tokens` are due for a scheduled refresh: within the leeway of an expiry the
    /// server announced, and not so short-lived that "due" would mean "always".
    private func isDue(_ tokens: TokenSet) -> Bool {
        guard let expiresAt = tokens.expiresAt,
              expiresAt.timeIntervalSince(tokens.issuedAt) >= configuration.minimumScheduledLifetime else { return false }
        return tokens.expires(within: configuration.refreshLeeway, at: configuration.now())
    }

    /// Tokens newer than `stale`: the current ones if someone already replaced `stale`, the
    /// result of the refresh in flight, or of a new refresh.
    private func refreshed(replacing stale: TokenSet) async throws(AuthError) -> TokenSet {
        if let inFlight = refresh, inFlight.epoch == epoch {
            return try await inFlight.task.value.get()
        }
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if current.accessToken != stale.accessToken { return current }

        if !isDue(current) {
            let now = ContinuousClock.now
            earlyRefreshStarts.removeAll { now - $0 >= configuration.refreshWindow }
            guard earlyRefreshStarts.count < configuration.maxRefreshesPerWindow else {
                logger.warning("refresh limit reached", metadata: ["limit": "\(configuration.maxRefreshesPerWindow)"])
                emit(.refreshLimitReached)
                throw .refreshLimitReached
            }
            earlyRefreshStarts.append(now)
        }

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

    /// The error for callers of a refresh whose session ended while it waited.
    private var endedSessionError: AuthError {
        tokens == nil ? .signedOut(signOutReason) : .sessionChanged
    }

    /// The one refresh in flight in this process. Runs on the actor between its suspension
    /// points, and holds the cross-process lock from the vault read to the vault write.
    private func performRefresh(of held: TokenSet, id: UInt64, epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        defer {
            if refresh?.id == id { refresh = nil }
        }
        publish(.refreshing)
        logger.debug("refresh started")

        let lease: HeldRefreshLock
        do {
            lease = try await refreshLock.acquire()
        } catch {
            logger.error("could not take the refresh lock", metadata: ["error": "\(error)"])
            if startEpoch == epoch { publish(.signedIn) }
            return .failure(.storage(error))
        }
        defer { lease.release() }
        guard startEpoch == epoch else { return .failure(endedSessionError) }

        // What the vault holds now, under the lock. `nil` here: unknown (unreadable, or our
        // tokens are newer than the vault's after a failed write), so nothing is compared.
        var current = held
        var expected: TokenSet?? = nil
        if !unpersisted {
            do {
                let inVault = try await store.loadOffPool()
                guard startEpoch == epoch else { return .failure(endedSessionError) }
                expected = .some(inVault)
                guard let inVault else {
                    // Another process signed out and deleted the tokens: follow it.
                    forget(.removedFromVault)
                    return .failure(.signedOut(.removedFromVault))
                }
                if !inVault.sameCredential(as: held) {
                    // Another process refreshed while we waited: its tokens, not a second
                    // refresh (our refresh token is stale; presenting it would trip reuse detection).
                    if !inVault.expires(within: configuration.refreshLeeway, at: configuration.now()), !refused.contains(fingerprint(inVault)) {
                        logger.info("using tokens refreshed by another process")
                        tokens = inVault
                        publish(.signedIn)
                        emit(.adoptedTokensFromVault)
                        return .success(inVault)
                    }
                    current = inVault
                }
            } catch {
                logger.warning("could not read the vault before refreshing", metadata: ["error": "\(error)"])
            }
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
            return await adopt(fresh, replacing: current, expected: expected, epoch: startEpoch)
        case .failure(.transient(let reason)):
            logger.warning("refresh failed for now, tokens kept", metadata: ["reason": "\(reason)"])
            emit(.refreshFailed(reason))
            publish(.signedIn)
            return .failure(.transient(reason))
        case .failure(.configuration(let code)):
            logger.error("the token endpoint refused the client; check its configuration; tokens kept", metadata: ["code": "\(code)"])
            emit(.configurationError(code))
            publish(.signedIn)
            return .failure(.configuration(code))
        case .failure(.sessionTakenOver):
            await endSession(.sessionTakenOver, ending: current, lockHeld: true)
            return .failure(.sessionTakenOver)
        case .failure(.refused(let code)):
            return await refusedRefresh(code, replacing: current, expected: expected, epoch: startEpoch)
        case .failure(.unsupported):
            return await refusedRefresh("unsupported", replacing: current, expected: expected, epoch: startEpoch)
        }
    }

    private func refusedRefresh(_ code: String, replacing current: TokenSet, expected: TokenSet??,
                                epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        logger.notice("refresh refused", metadata: ["code": "\(code)"])
        emit(.refreshRefused(code))
        refused.insert(fingerprint(current))
        return await fallback(after: code, replacing: current, expected: expected, epoch: startEpoch)
    }

    /// After a refused refresh, still under the lock: log in again without the user if the
    /// strategy can, else sign out.
    private func fallback(after code: String, replacing current: TokenSet, expected: TokenSet??,
                          epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        guard strategy.canRelogin else {
            await endSession(.refreshRefused(code), ending: current, lockHeld: true)
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
            return await adopt(fresh, replacing: current, expected: expected, epoch: startEpoch)
        case .failure(.transient(let reason)):
            emit(.refreshFailed(reason))
            publish(.signedIn)
            return .failure(.transient(reason))
        case .failure(.configuration(let reloginCode)):
            emit(.configurationError(reloginCode))
            publish(.signedIn)
            return .failure(.configuration(reloginCode))
        case .failure(.sessionTakenOver):
            await endSession(.loggedInOnAnotherDevice, ending: current, lockHeld: true)
            return .failure(.loggedInOnAnotherDevice)
        case .failure(.refused(let reloginCode)):
            await endSession(.reloginRefused(reloginCode), ending: current, lockHeld: true)
            return .failure(.signedOut(.reloginRefused(reloginCode)))
        case .failure(.unsupported):
            await endSession(.refreshRefused(code), ending: current, lockHeld: true)
            return .failure(.signedOut(.refreshRefused(code)))
        }
    }

    /// If the session changed while the strategy worked, the error for the waiters; new
    /// tokens from that stale refresh are revoked, not kept.
    private func superseded(since startEpoch: UInt64, _ outcome: Result<TokenSet, StrategyError>) -> AuthError? {
        guard startEpoch != epoch else { return nil }
        logger.info("discarding a refresh result from an ended session")
        if case .success(let orphan) = outcome { revokeInBackground(orphan) }
        return endedSessionError
    }

    private func revokeInBackground(_ orphan: TokenSet) {
        let strategy = self.strategy, transport = self.transport
        Task { await strategy.revoke(orphan, transport: transport) }
    }

    /// Persists `fresh` (under the lock, and only if the vault still holds what it held when
    /// the refresh started), then makes it current: callers see new tokens only once they are
    /// durable.
    private func adopt(_ fresh: TokenSet, replacing current: TokenSet, expected: TokenSet??,
                       epoch startEpoch: UInt64) async -> Result<TokenSet, AuthError> {
        var fresh = fresh
        if fresh.sessionID == nil { fresh.sessionID = current.sessionID }
        let swap: StoreSwap
        do {
            if let expected {
                swap = try await store.save(fresh, ifHolding: expected)
            } else {
                let store = self.store, tokensToSave = fresh
                try await OffPool.run { () throws(TokenStoreError) in try store.save(tokensToSave) }
                swap = .done
            }
        } catch {
            guard startEpoch == epoch else {
                revokeInBackground(fresh)
                return .failure(endedSessionError)
            }
            // The old refresh token is likely dead already (rotation): keep the new ones in
            // memory rather than lose them, hand them to the caller, retry the write later.
            logger.error("refreshed tokens could not be persisted", metadata: ["error": "\(error)"])
            tokens = fresh
            unpersisted = true
            publish(.signedIn)
            emit(.refreshed)
            return .failure(.tokensNotPersisted(fresh, error))
        }
        guard startEpoch == epoch else {
            // Signed out meanwhile: the sign-out waits for this lock and revokes what we stored.
            return .failure(endedSessionError)
        }
        if case .changed(let now) = swap {
            // Someone wrote the vault without the lock during the token request (a sign-in):
            // theirs wins, ours are revoked.
            logger.notice("the vault changed during the refresh; using what it holds")
            revokeInBackground(fresh)
            guard let now else {
                forget(.removedFromVault)
                return .failure(.signedOut(.removedFromVault))
            }
            tokens = now
            publish(.signedIn)
            return .success(now)
        }
        unpersisted = false
        tokens = fresh
        publish(.signedIn)
        emit(.refreshed)
        logger.info("tokens refreshed")
        return .success(fresh)
    }

    // MARK: Single-device session support (see SingleDeviceSession.swift)

    /// Increases at every sign-in and sign-out.
    var sessionEpoch: UInt64 { epoch }

    /// Stores the session id in the current tokens, if the session did not change meanwhile,
    /// under the lock and into what the vault holds (another process may have rotated them).
    func recordSessionID(_ sessionID: String?, epoch expected: UInt64) async throws(AuthError) {
        guard expected == epoch, let current = tokens else { throw .sessionChanged }
        let store = self.store
        let result: Result<TokenSet?, TokenStoreError>
        do {
            let lease = try await refreshLock.acquire()
            defer { lease.release() }
            result = .success(try await OffPool.run { () throws(TokenStoreError) -> TokenSet? in
                let inVault = try store.load()
                guard var newest = current.sameCredential(as: inVault) ? current : inVault else { return nil }
                newest.sessionID = sessionID
                try store.save(newest)
                return newest
            })
        } catch {
            result = .failure(error)
        }
        guard expected == epoch else { throw .sessionChanged }
        switch result {
        case .success(let newest?):
            tokens = newest
        case .success(nil):
            // Another process deleted the tokens meanwhile.
            throw .sessionChanged
        case .failure(let error):
            var updated = current
            updated.sessionID = sessionID
            tokens = updated
            unpersisted = true
            throw .tokensNotPersisted(updated, error)
        }
    }

    /// The server refused the session claim: sign out and revoke the tokens just obtained.
    func refuseLogin(_ refusedTokens: TokenSet) async {
        emit(.leaseLost)
        await endSession(.loggedInOnAnotherDevice, ending: refusedTokens, lockHeld: false)
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
        let response = try? await transport.send(request)
        guard let response, strategy.authFailure(in: response, for: request) == .tokenRejected,
              old.refreshToken != nil,
              let fresh = try? await strategy.refresh(old, transport: transport) else {
            if let response { leaseReleased(response) }
            return nil
        }
        request.setHeader("Authorization", fresh.authorizationHeader)
        if let retried = try? await transport.send(request) { leaseReleased(retried) }
        return fresh
    }

    private func leaseReleased(_ response: HTTPResponse) {
        guard [200, 204, 404, 410].contains(response.status) else { return }
        logger.info("session released at sign-out")
        emit(.leaseReleased)
    }
}
