import Foundation
import ServiceLifecycle

/// The server's single-device session contract: one account, one live session (a lease
/// with a time-to-live), claimed at login, kept alive while running, released at logout
/// and at shutdown. See docs/AUTH.md for the endpoints.
public struct SingleDeviceSession: Sendable {
    /// The sessions collection: `POST` claims, `PUT {endpoint}/{id}` keeps alive, `DELETE {endpoint}/{id}` releases.
    public var endpoint: URL
    /// This device's stable identifier, sent when claiming.
    public var deviceID: String
    /// How often ``AuthSessionService`` renews the lease; keep it well under the server's TTL.
    public var keepAliveInterval: Duration
    /// How long a release at shutdown may take before the process goes on exiting.
    public var releaseTimeout: Duration

    public init(endpoint: URL, deviceID: String, keepAliveInterval: Duration = .seconds(30), releaseTimeout: Duration = .seconds(5)) {
        self.endpoint = endpoint
        self.deviceID = deviceID
        self.keepAliveInterval = keepAliveInterval
        self.releaseTimeout = releaseTimeout
    }

    func url(of sessionID: String) -> URL {
        endpoint.appendingPathComponent(sessionID)
    }
}

extension AuthClient {
    /// Claims the single-device session for the current tokens, unless they hold one.
    ///
    /// - Throws: ``AuthError/loggedInOnAnotherDevice`` (the client is then signed out and
    ///   the tokens revoked) and the errors of ``send(_:)``.
    public func claimSession() async throws(AuthError) {
        guard let session = configuration.session else { return }
        guard let current = currentTokens else { throw .signedOut(.neverSignedIn) }
        let claimEpoch = sessionEpoch
        var request = HTTPRequest(method: "POST", url: session.endpoint)
        request.setHeader("Content-Type", "application/json")
        request.body = try? JSONSerialization.data(withJSONObject: ["device_id": session.deviceID])
        let response = try await send(request)
        switch response.status {
        case 200, 201:
            guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
                  let sessionID = object["session_id"] as? String else {
                throw .sessionProtocol(.claimWithoutSessionID)
            }
            try await recordSessionID(sessionID, epoch: claimEpoch)
            configuration.logger.info("session claimed")
            emit(.leaseClaimed)
        case 409:
            await refuseLogin(current)
            throw .loggedInOnAnotherDevice
        default:
            throw .sessionProtocol(.unexpectedClaimStatus, httpStatus: response.status)
        }
    }

    /// Renews the lease; claims a new one if the server forgot it (expired).
    ///
    /// - Throws: ``AuthError/sessionTakenOver`` (signed out) and the errors of ``send(_:)``.
    public func keepSessionAlive() async throws(AuthError) {
        guard let session = configuration.session, let current = currentTokens else { return }
        guard let sessionID = current.sessionID else {
            try await claimSession()
            return
        }
        let response = try await send(HTTPRequest(method: "PUT", url: session.url(of: sessionID)))
        switch response.status {
        case 200, 204:
            configuration.logger.debug("session renewed")
            emit(.leaseRenewed)
            return
        case 404, 410:
            configuration.logger.info("session lease expired; claiming a new one")
            try await claimSession()
        default:
            throw .sessionProtocol(.unexpectedKeepAliveStatus, httpStatus: response.status)
        }
    }

    /// Releases the lease, keeping the tokens (the next start claims a new one). For a
    /// sign-out use ``signOut()``, which also releases.
    public func releaseSession() async throws(AuthError) {
        guard let session = configuration.session, let sessionID = currentTokens?.sessionID else { return }
        let releaseEpoch = sessionEpoch
        let response = try await send(HTTPRequest(method: "DELETE", url: session.url(of: sessionID)))
        guard [200, 204, 404, 410].contains(response.status) else {
            throw .sessionProtocol(.unexpectedReleaseStatus, httpStatus: response.status)
        }
        try? await recordSessionID(nil, epoch: releaseEpoch)
        emit(.leaseReleased)
        configuration.logger.info("session released")
    }

    /// ``releaseSession()`` with a deadline: returns `true` if the server confirmed in time,
    /// `false` on failure or when `timeout` passed first.
    ///
    /// The release and the deadline race as child tasks of this call; the loser is cancelled
    /// and nothing outlives the call. A cancelled release returns at once: the transport
    /// cancels its request and a wait for a shared refresh ends. Only a wait for another
    /// process's refresh lock cannot be cut short (it lasts at most that process's token request).
    public nonisolated func releaseSession(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await self.releaseSession()
                    return true
                } catch {
                    self.configuration.logger.warning("session release failed", metadata: ["error": "\(error)"])
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

/// Keeps the single-device session alive while the program runs and releases it on
/// graceful shutdown (SIGTERM, SIGINT with a ServiceGroup), awaited with a deadline.
///
/// For example:
///
/// ```swift
/// let group = ServiceGroup(services: [AuthSessionService(client: client)],
///                          gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public struct AuthSessionService: Service {
    public let client: AuthClient

    public init(client: AuthClient) {
        self.client = client
    }

    public func run() async throws {
        guard let session = client.configuration.session else {
            try? await gracefulShutdown()
            return
        }
        let client = self.client
        try? await cancelWhenGracefulShutdown {
            await Self.renew(client)
            while !Task.isCancelled {
                try await Task.sleep(for: session.keepAliveInterval)
                await Self.renew(client)
            }
        }
        let released = await client.releaseSession(timeout: session.releaseTimeout)
        client.configuration.logger.notice("shutdown", metadata: ["sessionReleased": "\(released)"])
    }

    private static func renew(_ client: AuthClient) async {
        guard await client.isSignedIn else { return }
        do {
            try await client.keepSessionAlive()
        } catch {
            client.configuration.logger.warning("session keep-alive failed", metadata: ["error": "\(error)"])
        }
    }
}
