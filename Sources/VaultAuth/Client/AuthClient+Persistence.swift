import Foundation

/// Making tokens durable: new tokens reach callers only once the vault holds them; when a
/// write fails they are kept in memory (the old refresh token is likely dead already) and
/// the write is retried before each request.
extension AuthClient {
    /// Persists `fresh` (under the lock, and only if the vault still holds what it held when
    /// the refresh started), then makes it current: callers see new tokens only once they are
    /// durable.
    func adopt(_ fresh: TokenSet, replacing current: TokenSet, expected: TokenSet??,
               in flight: SharedRefresh) async -> Result<TokenSet, AuthError> {
        var fresh = fresh
        if fresh.sessionID == nil { fresh.sessionID = current.sessionID }
        let swap: StoreSwap
        do {
            if let expected {
                swap = try await store.save(fresh, ifHolding: expected)
            } else {
                try await store.save(fresh)
                swap = .done
            }
        } catch {
            guard flight.epoch == epoch else {
                flight.revokeAfterwards(fresh)
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
        guard flight.epoch == epoch else {
            // Signed out meanwhile: the sign-out waits for this lock and revokes what we stored.
            return .failure(endedSessionError)
        }
        if case .changed(let now) = swap {
            // Someone wrote the vault without the lock during the token request (a sign-in):
            // theirs wins, ours are revoked.
            logger.notice("the vault changed during the refresh; using what it holds")
            flight.revokeAfterwards(fresh)
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

    /// Writes tokens a failed write left only in memory, under the lock; on failure they stay
    /// unpersisted and the request goes on with them.
    func retryUnpersistedWrite(of current: TokenSet) async {
        do {
            let lease = try await refreshLock.acquire()
            defer { lease.release() }
            try await store.save(current)
            if tokens?.sameCredential(as: current) == true { unpersisted = false }
        } catch {
            logger.warning("tokens still not persisted", metadata: ["error": "\(error)"])
        }
    }

    /// Stores the session id in the current tokens, if the session did not change meanwhile,
    /// under the lock and into what the vault holds (another process may have rotated them).
    func recordSessionID(_ sessionID: String?, epoch expected: UInt64) async throws(AuthError) {
        guard expected == epoch, let current = tokens else { throw .sessionChanged }
        let result: Result<TokenSet?, TokenStoreError>
        do {
            let lease = try await refreshLock.acquire()
            defer { lease.release() }
            result = .success(try await store.recordSessionID(sessionID, into: current))
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
}
