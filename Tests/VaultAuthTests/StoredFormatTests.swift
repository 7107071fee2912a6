import Foundation
import Testing
import TestSupport
import VaultAuth
import VaultKit

/// What TokenStore and CredentialStore write, and that items written by earlier versions
/// (VaultAuth's own JSON envelope) still load.
@Suite struct StoredFormatTests {
    func makeVault(_ label: String = #function) throws -> Vault {
        try Vault.create(at: "\(TestPaths.temporaryDirectory(label))/tokens.vault", passphrase: "test", kdf: testKDF)
    }

    /// A token set exactly as VaultAuth wrote it before it used VaultKit values.
    static let legacyJSON = #"{"tokens":{"access_token":"at-old","expires_at":800000100,"issued_at":800000000,"refresh_token":"rt-old","scope":"read","session_id":"s-9","token_type":"Bearer"},"v":1}"#
    static let legacyTokens = TokenSet(accessToken: "at-old", refreshToken: "rt-old", tokenType: "Bearer", scope: "read",
                                       issuedAt: Date(timeIntervalSinceReferenceDate: 800_000_000),
                                       expiresAt: Date(timeIntervalSinceReferenceDate: 800_000_100), sessionID: "s-9")

    @Test func tokensWrittenByTheOldEnvelopeStillLoadAndAreRewrittenAsAValue() throws {
        let vault = try makeVault()
        let service = TokenStore.service(issuer: "i")
        try vault.set(Self.legacyJSON, service: service, account: "a", label: "VaultAuth tokens")
        let store = TokenStore(vault: vault, issuer: "i", account: "a")
        #expect(try store.load() == Self.legacyTokens)

        var rotated = Self.legacyTokens
        rotated.accessToken = "at-new"
        try store.save(rotated)
        let entry = try #require(try vault.entry(service: service, account: "a"))
        #expect(entry.holdsValue)
        #expect(try entry.encodedValue().schemaVersion == 1)
        #expect(try entry.value(TokenSet.self) == rotated)
        #expect(try store.load() == rotated)
    }

    @Test func theStoredValueIsTheValueEncodingOfTheSnakeCaseTokenSet() throws {
        let vault = try makeVault()
        try TokenStore(vault: vault, issuer: "i", account: "a").save(Self.legacyTokens)
        let text = try vault.string(service: TokenStore.service(issuer: "i"), account: "a")
        #expect(text == "vaultkit-value 1 1\n" + #"{"access_token":"at-old","expires_at":800000100,"issued_at":800000000,"refresh_token":"rt-old","scope":"read","session_id":"s-9","token_type":"Bearer"}"#)
    }

    @Test func unknownVersionsAreUndecodableNotMisread() throws {
        let vault = try makeVault()
        let service = TokenStore.service(issuer: "i")
        let store = TokenStore(vault: vault, issuer: "i", account: "a")
        try vault.set(Self.legacyJSON.replacingOccurrences(of: #""v":1"#, with: #""v":2"#), service: service, account: "a")
        #expect(throws: TokenStoreError.undecodable) { try store.load() }
        try vault.set("vaultkit-value 1 2\n{}", service: service, account: "a")
        #expect(throws: TokenStoreError.undecodable) { try store.load() }
        try vault.set("vaultkit-value 2 1\n{}", service: service, account: "a")
        #expect(throws: TokenStoreError.undecodable) { try store.load() }
        try vault.setValue(["not": "tokens"], schemaVersion: 1, service: service, account: "a")
        #expect(throws: TokenStoreError.undecodable) { try store.load() }
    }

    @Test func tokensThatCannotBeEncodedAreUndecodableAndNotWritten() throws {
        let vault = try makeVault()
        let store = TokenStore(vault: vault, issuer: "i", account: "a")
        #expect(throws: TokenStoreError.undecodable) {
            try store.save(TokenSet(accessToken: "x", issuedAt: Date(timeIntervalSinceReferenceDate: .nan)))
        }
        #expect(try vault.items().isEmpty)
    }

    @Test func credentialsAreThePlainPasswordWithTheirLabel() throws {
        let vault = try makeVault()
        let store = CredentialStore(vault: vault, issuer: "i", account: "alice")
        #expect(try store.password() == nil)
        try store.save(password: "pa55")
        #expect(try vault.string(service: "vaultauth.credentials:i", account: "alice") == "pa55")
        #expect(try vault.item(service: "vaultauth.credentials:i", account: "alice").label == "VaultAuth credentials")
        #expect(try store.password() == "pa55")
        try vault.set(Data([0xFF]), service: "vaultauth.credentials:i", account: "alice")
        #expect(throws: TokenStoreError.vault(.secretNotUTF8)) { try store.password() }
        #expect(try store.clear())
        #expect(try !store.clear())
        vault.close()
        #expect(throws: TokenStoreError.vault(.closed)) { try store.password() }
    }
}
