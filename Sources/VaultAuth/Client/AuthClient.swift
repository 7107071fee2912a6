import Foundation
import Logging
import VaultConcurrency

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
/// - Tokens the strategy has nothing to refresh with (``AuthStrategy/canRefresh(_:)``: no
///   refresh token) are used until they expire or are rejected, never dropped at the leeway.
/// - Each sign-in and sign-out starts a new session epoch; a refresh that lands in a later
///   epoch is discarded (and its tokens revoked), so a sign-out is never undone.
/// - Refreshes use the strategy with the raw transport, never ``send(_:)``.
///
/// Its work is spread over the files of `Client/`, one job each: signing in and out
/// (`AuthClient+SignIn.swift`), sending (`AuthClient+Send.swift`), the refresh state machine
/// (`AuthClient+Refresh.swift`) and the refresh its waiters share (`SharedRefresh.swift`), the
/// cap on early refreshes (`EarlyRefreshLimit.swift`), refused credentials
/// (`RefusedCredentials.swift`), persisting and retrying writes (`AuthClient+Persistence.swift`;
/// every vault call is in `CrossProcess/TokenStore+Async.swift`), the lease at sign-out
/// (`AuthClient+Lease.swift`) and states and events (`AuthClient+Events.swift`).
public actor AuthClient {
    /// The vault item the tokens live in.
    public nonisolated let store: TokenStore
    /// How tokens are refreshed and failures recognised.
    public nonisolated let strategy: any AuthStrategy
    /// The raw transport: used for requests (with a token added) and handed to the strategy.
    public nonisolated let transport: any HTTPTransport
    public nonisolated let configuration: Configuration
    /// Makes read-refresh-write one step for every process sharing the vault file.
    nonisolated let refreshLock: RefreshLock

    var tokens: TokenSet?
    /// The tokens in memory are newer than the vault's (a write failed); retried on each request.
    var unpersisted = false
    /// Increases at every sign-in and sign-out; work that started in an earlier epoch is discarded.
    var epoch: UInt64 = 0
    var signOutReason: SignOutReason = .neverSignedIn
    var state: AuthState
    /// The one refresh in flight in this process, if any.
    var refresh: SharedRefresh?
    var refused = RefusedCredentials()
    var earlyRefreshes: EarlyRefreshLimit
    /// Fans ``state`` out to ``states()``; keeps the latest for new subscribers.
    let stateBroadcast: Broadcast<AuthState>
    /// Fans events out to ``events()``.
    let eventBroadcast = Broadcast<AuthEvent>(bufferingPolicy: .bufferingNewest(256))

    var logger: Logger { configuration.logger }

    /// Creates a client and loads the stored tokens, if any (signed in when there are).
    ///
    /// - Throws: ``TokenStoreError`` when the vault cannot be read.
    public init(store: TokenStore, strategy: any AuthStrategy, transport: any HTTPTransport = URLSessionTransport(),
                configuration: Configuration = Configuration()) throws(TokenStoreError) {
        self.store = store
        self.strategy = strategy
        self.transport = transport
        self.configuration = configuration
        self.refreshLock = try RefreshLock(store: store)
        self.earlyRefreshes = EarlyRefreshLimit(limit: configuration.maxRefreshesPerWindow, window: configuration.refreshWindow)
        let stored = try store.load()
        let initial: AuthState = stored == nil ? .signedOut(.neverSignedIn) : .signedIn
        self.tokens = stored
        self.state = initial
        self.stateBroadcast = Broadcast(latest: initial, bufferingPolicy: .bufferingNewest(64))
    }

    /// The current state.
    public var currentState: AuthState { state }

    /// Whether tokens are present.
    public var isSignedIn: Bool { tokens != nil }

    /// A copy of the current tokens (for example to hand to another library); `nil` when signed out.
    public var currentTokens: TokenSet? { tokens }

    /// The error for callers of work whose session ended while it waited.
    var endedSessionError: AuthError {
        tokens == nil ? .signedOut(signOutReason) : .sessionChanged
    }
}
