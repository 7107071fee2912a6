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

    /// The encoding version written into each stored token set.
    static let formatVersion = 1

    public init(vault: Vault, issuer: String, account: String) {
        self.vault = vault
        self.issuer = issuer
        self.account = account
    }

    /// The vault service under which tokens of `issuer` are stored.
    public static func service(issuer: String) -> String { "vaultauth.tokens:\(issuer)" }

    var service: String { Self.service(issuer: issuer) }

    /// The stored tokens, or `nil` if there are none (signed out).
    ///
    /// - Throws: ``TokenStoreError/vault(_:)`` when the vault fails,
    ///   ``TokenStoreError/undecodable`` when the item is not a token set this version can read.
    public func load() throws(TokenStoreError) -> TokenSet? {
        let secret: SecretBytes
        do {
            secret = try vault.secret(service: service, account: account)
        } catch .itemNotFound {
            return nil
        } catch {
            throw .vault(error)
        }
        do {
            let stored = try secret.withUnsafeBytes { bytes in
                try JSONDecoder.tokens.decode(StoredTokens.self, from: Data(bytes))
            }
            guard stored.version == Self.formatVersion else { throw TokenStoreError.undecodable }
            return stored.tokens
        } catch {
            throw .undecodable
        }
    }

    /// Stores `tokens`, replacing what was stored, in one durable write.
    public func save(_ tokens: TokenSet) throws(TokenStoreError) {
        let encoded: SecretBytes
        do {
            var data = try JSONEncoder.tokens.encode(StoredTokens(version: Self.formatVersion, tokens: tokens))
            encoded = SecretBytes(data)
            // Wipe our plain copy; the vault keeps only the sealed one.
            data.resetBytes(in: 0..<data.count)
        } catch {
            throw .undecodable
        }
        do {
            try vault.set(encoded, service: service, account: account, label: "VaultAuth tokens")
        } catch {
            throw .vault(error)
        }
    }

    /// Removes the stored tokens.
    ///
    /// - Returns: whether there were any.
    @discardableResult
    public func clear() throws(TokenStoreError) -> Bool {
        do {
            return try vault.delete(service: service, account: account)
        } catch {
            throw .vault(error)
        }
    }
}

/// Why tokens could not be read or written. Never carries a token.
public enum TokenStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The vault failed; see the wrapped error.
    case vault(VaultError)
    /// The stored item is not a token set this version of VaultAuth can read.
    case undecodable
    /// The cross-process refresh lock beside the vault could not be taken (`EPERM`: the lock
    /// file is not a regular file owned by this user).
    case lock(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .vault(let error): "token storage failed: \(error)"
        case .undecodable: "the stored tokens are not in a format this version can read"
        case .lock(let path, let code): "cannot take the refresh lock \(path): \(String(cString: strerror(code)))"
        }
    }
}

/// The versioned envelope written into the vault item's secret.
struct StoredTokens: Codable {
    var version: Int
    var tokens: TokenSet

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case tokens
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

extension JSONEncoder {
    static var tokens: JSONEncoder {
        let encoder = JSONEncoder()
        // Seconds since 2001-01-01 as a JSON number: exactly what `Date` holds, so a round trip is lossless.
        encoder.dateEncodingStrategy = .deferredToDate
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}

extension JSONDecoder {
    static var tokens: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .deferredToDate
        return decoder
    }
}
