import Foundation

/// Signing in and out: each starts a new session epoch, so work of the session before
/// (a refresh in flight) is discarded when it lands.
extension AuthClient {
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
            try await store.save(newTokens)
        } catch {
            throw .storage(error)
        }
        guard signInEpoch == epoch else { throw .sessionChanged }
        tokens = newTokens
        unpersisted = false
        refresh = nil
        earlyRefreshes.reset()
        publish(.signedIn)
        emit(.signedIn)
        logger.info("signed in", metadata: ["issuer": "\(store.issuer)"])
        if configuration.session != nil, newTokens.sessionID == nil {
            try await claimSession()
        }
    }

    /// Signs in through the strategy's login without the user (stored credentials).
    ///
    /// - Throws: ``AuthError/signedOut(_:)`` with a ``SignOutReason/Code/reloginRefused`` reason when
    ///   the server refuses, ``AuthError/Code/configuration``, ``AuthError/Code/transient``, and
    ///   the errors of ``signIn(with:)``.
    public func signIn() async throws(AuthError) {
        let fresh: TokenSet
        do {
            fresh = try await strategy.relogin(transport: transport)
        } catch {
            switch error.code {
            case .transient, .configuration: throw AuthError(keeping: error)
            case .sessionTakenOver: throw .loggedInOnAnotherDevice
            default: throw .signedOut(SignOutReason(.reloginRefused, refusal: error))   // refused, unsupported
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
    func forget(_ reason: SignOutReason) {
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
    func endSession(_ reason: SignOutReason, ending ended: TokenSet, lockHeld: Bool) async {
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
}
