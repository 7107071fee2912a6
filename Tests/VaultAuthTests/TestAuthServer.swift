// The real HTTP server the VaultAuth tests talk to, on 127.0.0.1 and an ephemeral port.
// This file imports Hummingbird and not VaultAuth: both name a type `HTTPRequest`.
import Foundation
import Hummingbird
import Logging
import Synchronization

/// A wall clock tests can move forward; shared by the server and in-process clients so
/// expiry is decided without waiting.
final class TestClock: Sendable {
    /// Real time plus what the test advanced: tokens are stamped with `Date()` when they
    /// arrive, so a frozen clock would drift from them by however long a loaded machine
    /// took to get there, and a token could look fresher than the test intends.
    private let offset = Mutex<TimeInterval>(0)
    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }
    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// Counts what the server saw; read by the tests.
struct ServerCounters: Sendable {
    var refreshRequests = 0
    var refreshes = 0
    var reuseDetections = 0
    var passwordLogins = 0
    var refusedLogins = 0
    var revocations = 0
    var bearerOnTokenEndpoint = 0
    var resourceOK = 0
    var resourceUnauthorized = 0
    var alwaysUnauthorizedHits = 0
    var claims = 0
    var claimConflicts = 0
    var keepAlives = 0
    var releases = 0
    var takenOverAnswers = 0
}

enum SessionPolicy: Sendable {
    /// A second device's claim is refused while the first one's lease is live.
    case refuseSecond
    /// The latest login wins; the earlier device is told `session_taken_over`.
    case takeOver
}

/// An OAuth 2.0 authorization server and resource server in one, with rotating refresh
/// tokens and reuse detection (a used refresh token presented again revokes its whole
/// family), short-lived access tokens, RFC 7009 revocation and single-device leases.
final class TestAuthServer: Sendable {
    struct Family: Sendable {
        var user: String
        var revoked = false
        /// Another device took the account's session.
        var displaced = false
    }
    struct AccessToken: Sendable {
        var family: Int
        var expiresAt: Date
        var revoked = false
        var used = false
    }
    struct Lease: Sendable {
        var id: String
        var device: String
        var family: Int
        var expiresAt: Date
    }
    struct State: Sendable {
        var users: [String: String] = ["alice": "wonderland", "bob": "builder"]
        var families: [Int: Family] = [:]
        var accessTokens: [String: AccessToken] = [:]
        /// refresh token -> (family, already used)
        var refreshTokens: [String: (family: Int, used: Bool)] = [:]
        var leases: [String: Lease] = [:]   // by user
        var nextID = 0
        var counters = ServerCounters()
        var accessTokenLifetime: TimeInterval = 300
        var leaseTTL: TimeInterval = 300
        var policy: SessionPolicy = .refuseSecond
        /// When set, the token endpoint answers refresh grants with this status.
        var refreshFailureStatus: Int?
        /// When set, the token endpoint answers refresh grants with this status and OAuth error code.
        var refreshError: (status: Int, code: String)?
    }

    let state = Mutex(State())
    let clock: TestClock
    /// Called for each refresh grant after the rotation is recorded and before the answer is sent.
    let refreshHook = Mutex<(@Sendable () async -> Void)?>(nil)
    /// Called for each refused refresh grant before the refusal is sent.
    let refusalHook = Mutex<(@Sendable () async -> Void)?>(nil)
    /// Called for each session release before it is carried out (to make a server hang).
    let releaseHook = Mutex<(@Sendable () async -> Void)?>(nil)
    /// Called the first time the protected resource sees an access token, before it answers.
    let firstUseHook = Mutex<(@Sendable (String) async -> Void)?>(nil)

    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    private(set) nonisolated(unsafe) var port = 0

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var tokenURL: URL { baseURL.appendingPathComponent("oauth/token") }
    var revokeURL: URL { baseURL.appendingPathComponent("oauth/revoke") }
    var resourceURL: URL { baseURL.appendingPathComponent("api/me") }
    var alwaysUnauthorizedURL: URL { baseURL.appendingPathComponent("api/always-401") }
    var sessionsURL: URL { baseURL.appendingPathComponent("sessions") }

    var counters: ServerCounters { state.withLock { $0.counters } }
    func configure(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }

    init(clock: TestClock = TestClock()) {
        self.clock = clock
    }

    /// Starts listening; returns once the port is known.
    static func start(clock: TestClock = TestClock(), configure: (inout State) -> Void = { _ in }) async throws -> TestAuthServer {
        let server = TestAuthServer(clock: clock)
        server.state.withLock { configure(&$0) }
        let router = Router()
        server.routes(router)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "test-auth-server")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        server.task.withLock { $0 = Task { try await app.run() } }
        for await port in ports {
            server.port = port
        }
        guard server.port != 0 else { throw CancellationError() }
        return server
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }

    // MARK: Administration used by tests

    /// Makes every access token issued so far answer 401 (the server's idea of expiry),
    /// whatever the client believes.
    func expireAllAccessTokens() {
        state.withLock { state in
            for key in state.accessTokens.keys { state.accessTokens[key]!.revoked = true }
        }
    }

    /// Revokes every refresh-token family of `user` (an administrator ended the grant).
    func revokeGrants(of user: String) {
        state.withLock { state in
            for (id, family) in state.families where family.user == user { state.families[id]!.revoked = true }
        }
    }

    func lease(of user: String) -> Lease? {
        state.withLock { $0.leases[user] }
    }

    /// Whether a refresh token is still accepted (unused, family live).
    func isLive(refreshToken: String) -> Bool {
        state.withLock { state in
            guard let entry = state.refreshTokens[refreshToken], !entry.used else { return false }
            return state.families[entry.family].map { !$0.revoked } ?? false
        }
    }

    // MARK: Routes

    private func routes(_ router: Router<BasicRequestContext>) {
        router.post("/oauth/token") { request, _ in
            let form = try await Self.form(request)
            return await self.token(form, authorization: request.headers[.authorization])
        }
        router.post("/oauth/revoke") { request, _ in
            let form = try await Self.form(request)
            self.revoke(form["token"] ?? "")
            return Response(status: .ok)
        }
        router.get("/api/me") { request, _ in
            await self.resource(request.headers[.authorization])
        }
        router.get("/api/always-401") { _, _ in
            self.state.withLock { $0.counters.alwaysUnauthorizedHits += 1 }
            return Self.json(.unauthorized, ["error": "invalid_token"])
        }
        router.post("/sessions") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 16)
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
            return self.claim(request.headers[.authorization], device: object?["device_id"] as? String ?? "")
        }
        router.put("/sessions/:id") { request, context in
            self.keepAlive(request.headers[.authorization], id: context.parameters.get("id") ?? "")
        }
        router.delete("/sessions/:id") { request, context in
            if let hook = self.releaseHook.withLock({ $0 }) { await hook() }
            return self.release(request.headers[.authorization], id: context.parameters.get("id") ?? "")
        }
    }

    private func newToken(_ prefix: String, _ state: inout State) -> String {
        state.nextID += 1
        return "\(prefix)-\(state.nextID)-\(UUID().uuidString.prefix(8))"
    }

    private func issue(family: Int, _ state: inout State) -> [String: Any] {
        let access = newToken("at", &state)
        let refresh = newToken("rt", &state)
        state.accessTokens[access] = AccessToken(family: family, expiresAt: clock.now().addingTimeInterval(state.accessTokenLifetime))
        state.refreshTokens[refresh] = (family, false)
        return ["access_token": access, "token_type": "bearer", "expires_in": Int(state.accessTokenLifetime),
                "refresh_token": refresh, "scope": "profile"]
    }

    private func token(_ form: [String: String], authorization: String?) async -> Response {
        if authorization?.lowercased().hasPrefix("bearer") == true {
            state.withLock { $0.counters.bearerOnTokenEndpoint += 1 }
        }
        switch form["grant_type"] {
        case "password":
            let answer: [String: Any]? = state.withLock { state in
                guard let user = form["username"], state.users[user] == form["password"], form["password"] != nil else {
                    state.counters.refusedLogins += 1
                    return nil
                }
                state.counters.passwordLogins += 1
                state.nextID += 1
                let family = state.nextID
                state.families[family] = Family(user: user)
                return issue(family: family, &state)
            }
            guard let answer else { return Self.json(.badRequest, ["error": "invalid_grant"]) }
            return Self.json(.ok, answer)
        case "refresh_token":
            enum Outcome { case issued([String: Any]), refused, failure(Int), error(Int, String), takenOver }
            let outcome: Outcome = state.withLock { state in
                state.counters.refreshRequests += 1
                if let status = state.refreshFailureStatus { return .failure(status) }
                if let (status, code) = state.refreshError { return .error(status, code) }
                guard let presented = form["refresh_token"], let entry = state.refreshTokens[presented],
                      let family = state.families[entry.family] else { return .refused }
                if family.displaced { return .takenOver }
                if family.revoked { return .refused }
                if entry.used {
                    // Reuse detected: someone holds a copy of a rotated token. End the whole family.
                    state.counters.reuseDetections += 1
                    state.families[entry.family]!.revoked = true
                    return .refused
                }
                state.refreshTokens[presented]!.used = true
                state.counters.refreshes += 1
                return .issued(issue(family: entry.family, &state))
            }
            switch outcome {
            case .issued(let answer):
                if let hook = refreshHook.withLock({ $0 }) { await hook() }
                return Self.json(.ok, answer)
            case .refused:
                if let hook = refusalHook.withLock({ $0 }) { await hook() }
                return Self.json(.badRequest, ["error": "invalid_grant"])
            case .error(let status, let code):
                return Self.json(HTTPResponse.Status(code: status), ["error": code])
            case .takenOver:
                state.withLock { $0.counters.takenOverAnswers += 1 }
                return Self.json(.conflict, ["error": "session_taken_over"])
            case .failure(let status):
                return Self.json(HTTPResponse.Status(code: status), ["error": "temporarily_unavailable"])
            }
        default:
            return Self.json(.badRequest, ["error": "unsupported_grant_type"])
        }
    }

    private func revoke(_ token: String) {
        state.withLock { state in
            state.counters.revocations += 1
            if let entry = state.refreshTokens[token] {
                state.families[entry.family]?.revoked = true
            } else if state.accessTokens[token] != nil {
                state.accessTokens[token]!.revoked = true
            }
        }
    }

    enum Authenticated {
        case success(Int)
        case failure(Response)
    }

    /// The family of a live bearer token, or the response to send instead.
    private func authenticate(_ authorization: String?, _ state: inout State) -> Authenticated {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            return .failure(Self.json(.unauthorized, ["error": "invalid_request"]))
        }
        let token = String(authorization.dropFirst("Bearer ".count))
        guard let access = state.accessTokens[token], let family = state.families[access.family] else {
            return .failure(Self.json(.unauthorized, ["error": "invalid_token"]))
        }
        if family.displaced {
            state.counters.takenOverAnswers += 1
            return .failure(Self.json(.conflict, ["error": "session_taken_over"]))
        }
        guard !access.revoked, !family.revoked, clock.now() < access.expiresAt else {
            return .failure(Self.json(.unauthorized, ["error": "invalid_token"]))
        }
        return .success(access.family)
    }

    private func resource(_ authorization: String?) async -> Response {
        let (result, firstUse): (Authenticated, String?) = state.withLock { state in
            let result = authenticate(authorization, &state)
            var firstUse: String?
            switch result {
            case .success:
                state.counters.resourceOK += 1
                let token = String(authorization!.dropFirst("Bearer ".count))
                if !state.accessTokens[token]!.used {
                    state.accessTokens[token]!.used = true
                    firstUse = token
                }
            case .failure:
                state.counters.resourceUnauthorized += 1
            }
            return (result, firstUse)
        }
        if let firstUse, let hook = firstUseHook.withLock({ $0 }) { await hook(firstUse) }
        switch result {
        case .success(let family):
            let user = state.withLock { $0.families[family]?.user ?? "" }
            return Self.json(.ok, ["user": user])
        case .failure(let response):
            return response
        }
    }

    private func claim(_ authorization: String?, device: String) -> Response {
        state.withLock { state in
            let family: Int
            switch authenticate(authorization, &state) {
            case .success(let id): family = id
            case .failure(let response): return response
            }
            let user = state.families[family]!.user
            if let lease = state.leases[user], lease.device != device, clock.now() < lease.expiresAt {
                switch state.policy {
                case .refuseSecond:
                    state.counters.claimConflicts += 1
                    return Self.json(.conflict, ["error": "session_conflict"])
                case .takeOver:
                    state.families[lease.family]?.displaced = true
                }
            }
            state.counters.claims += 1
            let id = newToken("session", &state)
            state.leases[user] = Lease(id: id, device: device, family: family, expiresAt: clock.now().addingTimeInterval(state.leaseTTL))
            return Self.json(.created, ["session_id": id, "expires_in": Int(state.leaseTTL)])
        }
    }

    private func keepAlive(_ authorization: String?, id: String) -> Response {
        state.withLock { state in
            let family: Int
            switch authenticate(authorization, &state) {
            case .success(let value): family = value
            case .failure(let response): return response
            }
            let user = state.families[family]!.user
            guard var lease = state.leases[user], lease.id == id, clock.now() < lease.expiresAt else {
                return Self.json(.notFound, ["error": "no_such_session"])
            }
            state.counters.keepAlives += 1
            lease.expiresAt = clock.now().addingTimeInterval(state.leaseTTL)
            lease.family = family
            state.leases[user] = lease
            return Self.json(.ok, ["expires_in": Int(state.leaseTTL)])
        }
    }

    private func release(_ authorization: String?, id: String) -> Response {
        state.withLock { state in
            let family: Int
            switch authenticate(authorization, &state) {
            case .success(let value): family = value
            case .failure(let response): return response
            }
            let user = state.families[family]!.user
            if state.leases[user]?.id == id {
                state.leases[user] = nil
                state.counters.releases += 1
            }
            return Response(status: .noContent)
        }
    }

    // MARK: Helpers

    private static func form(_ request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: 1 << 16)
        var result: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            result[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return result
    }

    private static func json(_ status: HTTPResponse.Status, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
