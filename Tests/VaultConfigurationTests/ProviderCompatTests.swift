import Configuration
import ConfigurationTesting
import Foundation
import Testing
import VaultConfiguration
import VaultKit

/// swift-configuration's own provider compatibility suite against a real vault.
@Suite struct ProviderCompatTests {
    /// The values `ProviderCompatTest` expects, written as vault secrets in the
    /// documented encodings (text, comma-separated arrays, raw bytes, base64 chunks).
    static let compatItems: [(account: String, secret: [UInt8])] = [
        ("string", Array("Hello".utf8)),
        ("other.string", Array("Other Hello".utf8)),
        ("int", Array("42".utf8)),
        ("other.int", Array("24".utf8)),
        ("double", Array("3.14".utf8)),
        ("other.double", Array("2.72".utf8)),
        ("bool", Array("true".utf8)),
        ("other.bool", Array("false".utf8)),
        ("bytes", Array("magic".utf8)),
        ("other.bytes", Array("magic2".utf8)),
        ("stringy.array", Array("Hello,World".utf8)),
        ("other.stringy.array", Array("Hello, Swift".utf8)),
        ("inty.array", Array("42,24".utf8)),
        ("other.inty.array", Array("16,32".utf8)),
        ("doubly.array", Array("3.14,2.72".utf8)),
        ("other.doubly.array", Array("0.9,1.8".utf8)),
        ("booly.array", Array("true,false".utf8)),
        ("other.booly.array", Array("false,true,yes".utf8)),
        ("byteChunky.array", Array("bWFnaWM=,bWFnaWMy".utf8)),
        ("other.byteChunky.array", Array("bWFnaWM=,bWFnaWMy,bWFnaWM=".utf8)),
    ]

    static func fill(_ vault: Vault, service: String) throws {
        try vault.batch { batch in
            for (account, secret) in compatItems {
                try batch.set(SecretBytes(secret), service: service, account: account)
            }
            // Another service's items are not this provider's values.
            try batch.set("Not mine", service: service + ".other", account: "absent.string")
        }
    }

    @Test func passesSwiftConfigurationsProviderCompatTest() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        try Self.fill(vault, service: "com.example.config")
        let provider = try await VaultConfigProvider(vault: vault, service: "com.example.config")
        try await ProviderCompatTest(provider: provider).runTest()
    }

    @Test func everyValueIsMarkedSecretAndRedacted() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        try await vault.set("hunter2-token", service: "app", account: "http.client.token")
        let provider = try await VaultConfigProvider(vault: vault, service: "app")
        let result = try provider.value(forKey: ["http", "client", "token"], type: .string)
        #expect(result.encodedKey == "http.client.token")
        let value = try #require(result.value)
        #expect(value.isSecret)
        #expect(value.content == .string("hunter2-token"))
        #expect(!String(describing: value).contains("hunter2"))
        let reader = ConfigReader(provider: provider)
        #expect(reader.string(forKey: "http.client.token") == "hunter2-token")
    }

    @Test func aSecretThatIsNotTheRequestedTypeIsATypedError() async throws {
        let vault = try makeVault()
        defer { vault.close() }
        try await vault.set("not-a-number", service: "app", account: "port")
        try await vault.set(SecretBytes([0xFF, 0xFE]), service: "app", account: "binary")
        let provider = try await VaultConfigProvider(vault: vault, service: "app")
        #expect(throws: VaultConfigError.valueNotConvertible(key: "port", type: .int)) {
            try provider.value(forKey: ["port"], type: .int)
        }
        #expect(throws: VaultConfigError.valueNotConvertible(key: "binary", type: .string)) {
            try provider.value(forKey: ["binary"], type: .string)
        }
        #expect(try provider.value(forKey: ["binary"], type: .bytes).value?.content == .bytes([0xFF, 0xFE]))
        #expect(!VaultConfigError.valueNotConvertible(key: "port", type: .int).description.contains("not-a-number"))
    }
}
