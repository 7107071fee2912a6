import Foundation
import VaultKit

/// Reads and writes one account's ``TokenSet`` as a single vault item.
///
/// The item's service is `"vaultauth.tokens:" + issuer` and its account is the account
/// name; the whole token set is the item's secret, so it is sealed like every secret
/// and nothing sensitive is in the label or generic data. One item per
/// (issuer, account) means a rotated refresh token and its access token are written
/// together, atomically and durably, or not at all.
///
/// For example:
///
/// ```swift
/// let store = TokenStore(vault: vault, issuer: "https://auth.example.com", account: "alice")
/// try store.save(tokens)
/// let restored = try store.load()   // nil when signed out
/// ```
public struct TokenStore: Sendable {
    /// The vault that holds the tokens.
    public let vault: Vault
    /// The token issuer, for example the authorization server's URL.
    public let issuer: String
    /// The account the tokens belong to.
    public let account: String

    /// The schema version of the stored token set (VaultKit's value encoding carries it;
    /// before that, the `v` field of VaultAuth's own JSON envelope).
    static let schemaVersion = 1

    public init(vault: Vault, issuer: String, account: String) {
        self.vault = vault
        self.issuer = issuer
        self.account = account
    }

    /// The vault service under which tokens of `issuer` are stored.
    public static func service(issuer: String) -> String { "vaultauth.tokens:\(issuer)" }

    var service: String { Self.service(issuer: issuer) }

    private var item: AuthVaultItem {
        AuthVaultItem(vault: vault, service: service, account: account, label: "VaultAuth tokens")
    }

    /// The stored tokens, or `nil` if there are none (signed out).
    ///
    /// Reads token sets in VaultKit's value encoding, and those that earlier versions
    /// wrote in VaultAuth's own JSON envelope.
    ///
    /// - Throws: ``TokenStoreError/vault(_:)`` when the vault fails,
    ///   ``TokenStoreError/undecodable`` when the item is not a token set this version can read.
    public func load() throws(TokenStoreError) -> TokenSet? {
        try Self.tokens(in: item.entry())
    }

    /// ``load()`` for async code: the vault's async read, so the caller's thread never blocks.
    public func load() async throws(TokenStoreError) -> TokenSet? {
        try await Self.tokens(in: item.entry())
    }

    /// ``save(_:)`` for async code.
    public func save(_ tokens: TokenSet) async throws(TokenStoreError) {
        try await item.setValue(tokens, schemaVersion: Self.schemaVersion)
    }

    /// ``clear()`` for async code.
    @discardableResult
    public func clear() async throws(TokenStoreError) -> Bool {
        try await item.clear()
    }

    /// The token set a stored entry holds (`nil`: no entry), in either encoding.
    private static func tokens(in entry: VaultEntry?) throws(TokenStoreError) -> TokenSet? {
        guard let entry else { return nil }
        guard entry.holdsValue else { return try LegacyStoredTokens.decode(entry.secret) }
        do {
            let stored = try entry.encodedValue()
            if stored.schemaVersion == Self.schemaVersion { return try stored.decode(TokenSet.self) }
        } catch {
            // Not a token set, or a value encoding of a newer VaultKit.
        }
        throw .undecodable
    }

    /// Stores `tokens`, replacing what was stored, in one durable write.
    public func save(_ tokens: TokenSet) throws(TokenStoreError) {
        try item.setValue(tokens, schemaVersion: Self.schemaVersion)
    }

    /// Removes the stored tokens.
    ///
    /// - Returns: whether there were any.
    @discardableResult
    public func clear() throws(TokenStoreError) -> Bool {
        try item.clear()
    }
}

/// The JSON envelope VaultAuth wrote before it used VaultKit's value encoding,
/// `{"tokens":{…},"v":1}`: still read, never written.
struct LegacyStoredTokens: Codable {
    var version: Int
    var tokens: TokenSet

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case tokens
    }

    static func decode(_ secret: SecretBytes) throws(TokenStoreError) -> TokenSet {
        let stored = secret.withUnsafeBytes { bytes in
            try? JSONDecoder.tokens.decode(LegacyStoredTokens.self, from: Data(bytes))
        }
        guard let stored, stored.version == TokenStore.schemaVersion else { throw .undecodable }
        return stored.tokens
    }
}

extension TokenSet {
    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case tokenType = "token_type"
        case scope
        case issuedAt = "issued_at"
        case expiresAt = "expires_at"
        case sessionID = "session_id"
    }
}

extension JSONDecoder {
    static var tokens: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        return decoder
    }
}
