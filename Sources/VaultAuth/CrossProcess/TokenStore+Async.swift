import Foundation

/// What a conditional write found when the vault no longer held what the caller expected.
enum StoreSwap: Sendable {
    /// The write or delete was done.
    case done
    /// Someone else changed the item meanwhile; this is what it holds now (`nil`: deleted).
    case changed(TokenSet?)
}

extension TokenSet {
    /// Whether both hold the same credential (access and refresh token), whatever their metadata.
    func sameCredential(as other: TokenSet?) -> Bool {
        guard let other else { return false }
        return accessToken == other.accessToken && refreshToken == other.refreshToken
    }
}

/// Every vault call ``AuthClient`` makes after its initial load, in one place, each through
/// the vault's own async calls (``TokenStore/load()``'s async twin and its siblings), so none
/// of them blocks the cooperative pool.
///
/// The writes the client makes while it holds the refresh lock are conditional, because a
/// writer that does not take the lock (an app calling ``TokenStore/save(_:)``, `signIn(with:)`
/// in another process) may still have replaced the tokens: nothing is overwritten or deleted
/// that the caller has not seen. Read and write are separate vault calls; the lock holder's
/// view stays exact because every writer that matters (refreshes, sign-outs) takes the lock.
extension TokenStore {
    /// Writes `fresh` if the vault still holds the credential of `expected` (or nothing, when
    /// `expected` is `nil`).
    func save(_ fresh: TokenSet, ifHolding expected: TokenSet?) async throws(TokenStoreError) -> StoreSwap {
        let now = try await load()
        guard expected.map({ $0.sameCredential(as: now) }) ?? (now == nil) else { return .changed(now) }
        try await save(fresh)
        return .done
    }

    /// Deletes the item if it still holds the credential of `expected` (compare-and-delete).
    func delete(ifHolding expected: TokenSet) async throws(TokenStoreError) -> StoreSwap {
        let now = try await load()
        guard expected.sameCredential(as: now) else { return .changed(now) }
        try await clear()
        return .done
    }

    /// Reads what the vault holds and deletes it, in one step for the lock holder.
    func take() async throws(TokenStoreError) -> TokenSet? {
        // An item this version cannot read is deleted all the same: a sign-out must not fail on it.
        let now: TokenSet?
        do throws(TokenStoreError) {
            now = try await load()
        } catch .undecodable {
            now = nil
        }
        try await clear()
        return now
    }

    /// Stores `sessionID` in the newest tokens: `current`, or what the vault holds if another
    /// process replaced them meanwhile.
    ///
    /// - Returns: the tokens written, or `nil` when the vault holds none (another process
    ///   signed out), and then nothing is written.
    func recordSessionID(_ sessionID: String?, into current: TokenSet) async throws(TokenStoreError) -> TokenSet? {
        let inVault = try await load()
        guard var newest = current.sameCredential(as: inVault) ? current : inVault else { return nil }
        newest.sessionID = sessionID
        try await save(newest)
        return newest
    }
}
