import Foundation

/// The single-device lease at sign-out and at a refused claim (the rest of the contract is
/// in SingleDeviceSession.swift).
extension AuthClient {
    /// Increases at every sign-in and sign-out.
    var sessionEpoch: UInt64 { epoch }

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
    func releaseLease(of old: TokenSet) async -> TokenSet? {
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
