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

/// The reads and conditional writes ``AuthClient`` makes while it holds the refresh lock, off
/// the cooperative pool. Conditional, because a writer that does not take the lock (an app
/// calling ``TokenStore/save(_:)``, `signIn(with:)` in another process) may still have
/// replaced the tokens: nothing is overwritten or deleted that the caller has not seen.
extension TokenStore {
    func loadOffPool() async throws(TokenStoreError) -> TokenSet? {
        try await OffPool.run { () throws(TokenStoreError) -> TokenSet? in try load() }
    }

    /// Writes `fresh` if the vault still holds the credential of `expected` (or nothing, when
    /// `expected` is `nil`).
    func save(_ fresh: TokenSet, ifHolding expected: TokenSet?) async throws(TokenStoreError) -> StoreSwap {
        try await OffPool.run { () throws(TokenStoreError) -> StoreSwap in
            let now = try load()
            guard expected.map({ $0.sameCredential(as: now) }) ?? (now == nil) else { return .changed(now) }
            try save(fresh)
            return .done
        }
    }

    /// Deletes the item if it still holds the credential of `expected` (compare-and-delete).
    func delete(ifHolding expected: TokenSet) async throws(TokenStoreError) -> StoreSwap {
        try await OffPool.run { () throws(TokenStoreError) -> StoreSwap in
            let now = try load()
            guard expected.sameCredential(as: now) else { return .changed(now) }
            try clear()
            return .done
        }
    }

    /// Reads what the vault holds and deletes it, in one step for the lock holder.
    func take() async throws(TokenStoreError) -> TokenSet? {
        try await OffPool.run { () throws(TokenStoreError) -> TokenSet? in
            // An item this version cannot read is deleted all the same: a sign-out must not fail on it.
            let now: TokenSet?
            do throws(TokenStoreError) {
                now = try load()
            } catch .undecodable {
                now = nil
            }
            try clear()
            return now
        }
    }
}
