import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

@Suite struct TokenStoreTests {
    func makeVault() throws -> (Vault, String) {
        let path = "\(TestPaths.temporaryDirectory())/tokens.vault"
        return (try Vault.create(at: path, passphrase: "test", kdf: testKDF), path)
    }

    @Test func roundTripsAllFieldsAsOneItem() throws {
        let (vault, _) = try makeVault()
        let store = TokenStore(vault: vault, issuer: "https://auth.example.com", account: "alice")
        #expect(try store.load() == nil)
        let received = Date(timeIntervalSince1970: 1_800_000_000.123)
        let tokens = TokenSet(accessToken: "at-secret", refreshToken: "rt-secret", tokenType: "Bearer", scope: "read write",
                              expiresIn: 3600, receivedAt: received, sessionID: "s-1")
        try store.save(tokens)
        let loaded = try #require(try store.load())
        #expect(loaded == tokens)
        #expect(loaded.expiresAt == received.addingTimeInterval(3600))
        let items = try vault.items()
        #expect(items.count == 1)
        #expect(items[0].service == "vaultauth.tokens:https://auth.example.com")
        #expect(items[0].account == "alice")
        #expect(items[0].label == "VaultAuth tokens")
        #expect(items[0].generic == nil)
        #expect(try store.clear())
        #expect(try store.load() == nil)
        #expect(try !store.clear())
    }

    @Test func accountsAndIssuersAreSeparate() throws {
        let (vault, _) = try makeVault()
        let a = TokenStore(vault: vault, issuer: "https://a.example", account: "alice")
        let b = TokenStore(vault: vault, issuer: "https://b.example", account: "alice")
        let c = TokenStore(vault: vault, issuer: "https://a.example", account: "carol")
        try a.save(TokenSet(accessToken: "a"))
        try b.save(TokenSet(accessToken: "b"))
        #expect(try a.load()?.accessToken == "a")
        #expect(try b.load()?.accessToken == "b")
        #expect(try c.load() == nil)
    }

    @Test func survivesReopenFromAnotherHandle() throws {
        let (vault, path) = try makeVault()
        try TokenStore(vault: vault, issuer: "i", account: "a").save(TokenSet(accessToken: "x", refreshToken: "y", expiresIn: 10))
        let reopened = try Vault.open(at: path, passphrase: "test")
        #expect(try TokenStore(vault: reopened, issuer: "i", account: "a").load()?.refreshToken == "y")
    }

    @Test func rejectsAnItemThatIsNotATokenSet() throws {
        let (vault, _) = try makeVault()
        try vault.set("not json", service: TokenStore.service(issuer: "i"), account: "a")
        #expect(throws: TokenStoreError.undecodable) { try TokenStore(vault: vault, issuer: "i", account: "a").load() }
    }

    @Test func reportsVaultErrorsTyped() throws {
        let (vault, _) = try makeVault()
        vault.close()
        #expect(throws: TokenStoreError.vault(.closed)) { try TokenStore(vault: vault, issuer: "i", account: "a").save(TokenSet(accessToken: "x")) }
    }

    @Test func descriptionsNeverShowTokens() throws {
        let tokens = TokenSet(accessToken: "ACCESS-SECRET", refreshToken: "REFRESH-SECRET", scope: "read", expiresIn: 60, sessionID: "SESSION-SECRET")
        for text in [tokens.description, tokens.debugDescription, String(reflecting: tokens), "\(tokens)",
                     AuthError.tokensNotPersisted(tokens, .vault(.closed)).description, "\(AuthError.tokensNotPersisted(tokens, .undecodable))"] {
            #expect(!text.contains("SECRET"), "\(text)")
        }
        let request = HTTPRequest(method: "POST", url: URL(string: "https://x.example/token")!,
                                  headers: [("Authorization", "Bearer ACCESS-SECRET")], body: Data("password=SECRET".utf8))
        #expect(!request.description.contains("SECRET"))
    }

    @Test func expiryLeewayIsCappedAtHalfTheLifetime() {
        let start = Date(timeIntervalSince1970: 1000)
        let long = TokenSet(accessToken: "a", expiresIn: 3600, receivedAt: start)
        #expect(!long.expires(within: 60, at: start.addingTimeInterval(3500)))
        #expect(long.expires(within: 60, at: start.addingTimeInterval(3541)))
        // A 10-second token with a 60-second leeway refreshes after 5 seconds, not before every request.
        let short = TokenSet(accessToken: "a", expiresIn: 10, receivedAt: start)
        #expect(!short.expires(within: 60, at: start.addingTimeInterval(4)))
        #expect(short.expires(within: 60, at: start.addingTimeInterval(5)))
        #expect(!TokenSet(accessToken: "a").expires(within: 60))
    }
}
