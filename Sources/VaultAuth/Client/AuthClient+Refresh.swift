import Foundation

/// The refresh state machine: one refresh in flight per process, under the cross-process
/// lock from the vault read to the vault write, its outcome shared by every waiter.
extension AuthClient {
    /// Tokens newer than `stale`: the current ones if someone already replaced `stale`, the
    /// result of the refresh in flight, or of a new refresh.
    func refreshed(replacing stale: TokenSet) async throws(AuthError) -> TokenSet {
        if let inFlight = refresh, inFlight.epoch == epoch {
            return try await inFlight.outcome().get()
        }
        guard let current = tokens else { throw .signedOut(signOutReason) }
        if current.accessToken != stale.accessToken { return current }

        if !configuration.isDue(current) {
            guard earlyRefreshes.admit() else {
                logger.warning("refresh limit reached", metadata: ["limit": "\(configuration.maxRefreshesPerWindow)"])
                emit(.refreshLimitReached)
                throw .refreshLimitReached
            }
        }

        let flight = SharedRefresh(epoch: epoch)
        refresh = flight
        // The one unstructured task of the client, on purpose: the refresh belongs to every
        // request waiting for it, not to the one that happened to start it, so that caller's
        // cancellation must not cancel it (a token request abandoned after the server rotated
        // the refresh token loses the grant). It ends on its own, bounded by the transport's
        // timeout, and owns the revokes of tokens it could not keep.
        Task {
            let orphans = flight.finish(await self.performRefresh(flight, of: current))
            for orphan in orphans { await self.strategy.revoke(orphan, transport: self.transport) }
        }
        return try await flight.outcome().get()
    }

    /// The one refresh in flight in this process. Runs on the actor between its suspension
    /// points, and holds the cross-process lock from the vault read to the vault write.
    private func performRefresh(_ flight: SharedRefresh, of held: TokenSet) async -> Result<TokenSet, AuthError> {
        defer {
            if refresh === flight { refresh = nil }
        }
        publish(.refreshing)
        logger.debug("refresh started")

        let lease: HeldRefreshLock
        do {
            lease = try await refreshLock.acquire()
        } catch {
            logger.error("could not take the refresh lock", metadata: ["error": "\(error)"])
            if flight.epoch == epoch { publish(.signedIn) }
            return .failure(.storage(error))
        }
        defer { lease.release() }
        guard flight.epoch == epoch else { return .failure(endedSessionError) }

        // What the vault holds now, under the lock. `nil` here: unknown (unreadable, or our
        // tokens are newer than the vault's after a failed write), so nothing is compared.
        var current = held
        var expected: TokenSet?? = nil
        if !unpersisted {
            do {
                let inVault = try await store.load()
                guard flight.epoch == epoch else { return .failure(endedSessionError) }
                expected = .some(inVault)
                guard let inVault else {
                    // Another process signed out and deleted the tokens: follow it.
                    forget(.removedFromVault)
                    return .failure(.signedOut(.removedFromVault))
                }
                if !inVault.sameCredential(as: held) {
                    // Another process refreshed while we waited: its tokens, not a second
                    // refresh (our refresh token is stale; presenting it would trip reuse detection).
                    if !inVault.expires(within: configuration.refreshLeeway, at: configuration.now()), !refused.contains(inVault) {
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
        if refused.contains(current) {
            outcome = .failure(.refused(.previouslyRefused))
        } else {
            do {
                outcome = .success(try await strategy.refresh(current, transport: transport))
            } catch {
                outcome = .failure(error)
            }
        }
        if let discarded = superseded(flight, outcome) { return .failure(discarded) }

        let failure: StrategyError
        switch outcome {
        case .success(let fresh): return await adopt(fresh, replacing: current, expected: expected, in: flight)
        case .failure(let error): failure = error
        }
        switch failure.code {
        case .transient:
            logger.warning("refresh failed for now, tokens kept", metadata: ["reason": "\(failure.reasonText)"])
            return keepingTokens(failure)
        case .configuration:
            logger.error("the token endpoint refused the client; check its configuration; tokens kept",
                         metadata: ["code": "\(failure.reasonText)"])
            return keepingTokens(failure)
        case .sessionTakenOver:
            await endSession(.sessionTakenOver, ending: current, lockHeld: true)
            return .failure(.sessionTakenOver)
        default:
            // Refused, or a strategy that cannot refresh (unsupported): the credential is not used again.
            return await refusedRefresh(failure, replacing: current, expected: expected, in: flight)
        }
    }

    private func refusedRefresh(_ refusal: StrategyError, replacing current: TokenSet, expected: TokenSet??,
                                in flight: SharedRefresh) async -> Result<TokenSet, AuthError> {
        if refusal.reason == .noRefreshToken {
            logger.notice("the access token ran out or was rejected, and there is no refresh token")
        } else {
            logger.notice("refresh refused", metadata: ["code": "\(refusal.reasonText)"])
        }
        emit(AuthEvent(.refreshRefused, failure: refusal))
        refused.insert(current)
        return await fallback(after: refusal, replacing: current, expected: expected, in: flight)
    }

    /// After a refused refresh, still under the lock: log in again without the user if the
    /// strategy can, else sign out.
    private func fallback(after refusal: StrategyError, replacing current: TokenSet, expected: TokenSet??,
                          in flight: SharedRefresh) async -> Result<TokenSet, AuthError> {
        guard strategy.canRelogin else {
            let reason = SignOutReason(.refreshRefused, refusal: refusal)
            await endSession(reason, ending: current, lockHeld: true)
            return .failure(.signedOut(reason))
        }
        let outcome: Result<TokenSet, StrategyError>
        do {
            outcome = .success(try await strategy.relogin(transport: transport))
        } catch {
            outcome = .failure(error)
        }
        if let discarded = superseded(flight, outcome) { return .failure(discarded) }
        let failure: StrategyError
        switch outcome {
        case .success(let fresh):
            logger.info("logged in again after a refused refresh")
            return await adopt(fresh, replacing: current, expected: expected, in: flight)
        case .failure(let error):
            failure = error
        }
        let reason: SignOutReason
        switch failure.code {
        case .transient, .configuration:
            return keepingTokens(failure)
        case .sessionTakenOver:
            await endSession(.loggedInOnAnotherDevice, ending: current, lockHeld: true)
            return .failure(.loggedInOnAnotherDevice)
        case .unsupported:
            reason = SignOutReason(.refreshRefused, refusal: refusal)
        default:
            reason = SignOutReason(.reloginRefused, refusal: failure)
        }
        await endSession(reason, ending: current, lockHeld: true)
        return .failure(.signedOut(reason))
    }

    /// A failure that keeps the tokens (for now, or a refused client): back to signed in.
    private func keepingTokens(_ failure: StrategyError) -> Result<TokenSet, AuthError> {
        emit(AuthEvent(failure.code == .configuration ? .configurationError : .refreshFailed, failure: failure))
        publish(.signedIn)
        return .failure(AuthError(keeping: failure))
    }

    /// If the session changed while the strategy worked, the error for the waiters; new
    /// tokens from that stale refresh are revoked, not kept.
    private func superseded(_ flight: SharedRefresh, _ outcome: Result<TokenSet, StrategyError>) -> AuthError? {
        guard flight.epoch != epoch else { return nil }
        logger.info("discarding a refresh result from an ended session")
        if case .success(let orphan) = outcome { flight.revokeAfterwards(orphan) }
        return endedSessionError
    }
}
