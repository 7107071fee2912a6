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

/// Every vault call ``AuthClient`` makes after its initial load, in one place, each off the
/// cooperative pool through ``vaultWork(_:)``: to move them to an asynchronous vault API,
/// change that one function.
///
/// The writes the client makes while it holds the refresh lock are conditional, because a
/// writer that does not take the lock (an app calling ``TokenStore/save(_:)``, `signIn(with:)`
/// in another process) may still have replaced the tokens: nothing is overwritten or deleted
/// that the caller has not seen.
extension TokenStore {
    /// Runs a blocking vault call off the cooperative pool (the vault's reads and durable
    /// writes take its file locks and `fsync`).
    private func vaultWork<Success: Sendable>(
        _ body: @escaping @Sendable (TokenStore) throws(TokenStoreError) -> Success
    ) async throws(TokenStoreError) -> Success {
        let store = self
        return try await OffPool.run { () throws(TokenStoreError) -> Success in try body(store) }
    }

    func loadOffPool() async throws(TokenStoreError) -> TokenSet? {
        try await vaultWork { store throws(TokenStoreError) in try store.load() }
    }

    /// Writes `tokens` whatever the vault holds (a sign-in, a retried write of newer tokens).
    func saveOffPool(_ tokens: TokenSet) async throws(TokenStoreError) {
        try await vaultWork { store throws(TokenStoreError) in try store.save(tokens) }
    }

    /// Writes `fresh` if the vault still holds the credential of `expected` (or nothing, when
    /// `expected` is `nil`).
    func save(_ fresh: TokenSet, ifHolding expected: TokenSet?) async throws(TokenStoreError) -> StoreSwap {
        try await vaultWork { store throws(TokenStoreError) -> StoreSwap in
            let now = try store.load()
            guard expected.map({ $0.sameCredential(as: now) }) ?? (now == nil) else { return .changed(now) }
            try store.save(fresh)
            return .done
        }
    }

    /// Deletes the item if it still holds the credential of `expected` (compare-and-delete).
    func delete(ifHolding expected: TokenSet) async throws(TokenStoreError) -> StoreSwap {
        try await vaultWork { store throws(TokenStoreError) -> StoreSwap in
            let now = try store.load()
            guard expected.sameCredential(as: now) else { return .changed(now) }
            try store.clear()
            return .done
        }
    }

    /// Reads what the vault holds and deletes it, in one step for the lock holder.
    func take() async throws(TokenStoreError) -> TokenSet? {
        try await vaultWork { store throws(TokenStoreError) -> TokenSet? in
            // An item this version cannot read is deleted all the same: a sign-out must not fail on it.
            let now: TokenSet?
            do throws(TokenStoreError) {
                now = try store.load()
            } catch .undecodable {
                now = nil
            }
            try store.clear()
            return now
        }
    }

    /// Stores `sessionID` in the newest tokens: `current`, or what the vault holds if another
    /// process replaced them meanwhile.
    ///
    /// - Returns: the tokens written, or `nil` when the vault holds none (another process
    ///   signed out), and then nothing is written.
    func recordSessionID(_ sessionID: String?, into current: TokenSet) async throws(TokenStoreError) -> TokenSet? {
        try await vaultWork { store throws(TokenStoreError) -> TokenSet? in
            let inVault = try store.load()
            guard var newest = current.sameCredential(as: inVault) ? current : inVault else { return nil }
            newest.sessionID = sessionID
            try store.save(newest)
            return newest
        }
    }
}
