import Foundation

/// Sending requests with the current token, refreshing when it is due or rejected.
extension AuthClient {
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
                throw .transient(.cancelled)
            } catch let error as URLError where error.code == .cancelled {
                throw .transient(.cancelled)
            } catch {
                throw .transient(.network)
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
    /// refresh unless the tokens are due. Valid tokens the strategy cannot refresh
    /// (``AuthStrategy/canRefresh(_:)`` is `false`: no refresh token) are kept as they are.
    public func refreshNow() async throws(AuthError) {
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if refresh == nil, !strategy.canRefresh(current), !current.isExpired(at: configuration.now()) { return }
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
            return try await inFlight.outcome().get()
        }
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if unpersisted { await retryUnpersistedWrite(of: current) }
        guard current.expires(within: configuration.refreshLeeway, at: configuration.now()) else { return current }
        // Nothing to renew them with (no refresh token): valid until they expire or are rejected.
        if !strategy.canRefresh(current), !current.isExpired(at: configuration.now()) { return current }
        do {
            return try await refreshed(replacing: current)
        } catch {
            // Not expired yet: try the old token rather than fail the request.
            guard error.code == .transient, !current.isExpired(at: configuration.now()) else { throw error }
            logger.info("proactive refresh failed, using the current token", metadata: ["reason": "\(error.reasonText)"])
            return current
        }
    }
}
