import Foundation
import Testing
import TestTraits
import VaultKit

/// `Codable` values in their versioned encoding: the bytes, the round trip, and every
/// way a read can refuse, none of which shows the value.
@Suite(.offCooperativePool) struct CodableValueTests {
    struct Login: Codable, Equatable {
        var user: String
        var token: String
        var expires: Date
        var blob: Data
        var note: String?
    }

    static let login = Login(user: "alice", token: "t0k3n-secret", expires: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456),
                             blob: Data([0, 255, 10]), note: nil)

    @Test func aValueRoundTripsExactly() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.setValue(Self.login, service: "s", account: "a")
        #expect(try vault.value(Login.self, service: "s", account: "a") == Self.login)
        let entry = try #require(try vault.entry(service: "s", account: "a"))
        #expect(entry.holdsValue)
        #expect(try entry.value(Login.self) == Self.login)
        #expect(try entry.encodedValue().schemaVersion == 0)
    }

    @Test func theEncodingIsAHeaderLineThenSortedJSON() throws {
        struct Pair: Codable { var b: String; var a: Int }
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.setValue(Pair(b: "x", a: 1), schemaVersion: 12, service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "vaultkit-value 1 12\n" + #"{"a":1,"b":"x"}"#)
        let stored = try vault.entry(service: "s", account: "a")?.encodedValue()
        #expect(stored?.schemaVersion == 12)
        #expect(stored?.json == SecretBytes(#"{"a":1,"b":"x"}"#))
    }

    @Test func anEncodedValueIsStoredAsGivenAndReadBack() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.setValue(VaultEncodedValue(schemaVersion: 4, json: SecretBytes("[1,2,3]")), service: "s", account: "a", label: "L")
        #expect(try vault.string(service: "s", account: "a") == "vaultkit-value 1 4\n[1,2,3]")
        #expect(try vault.value([Int].self, service: "s", account: "a") == [1, 2, 3])
        #expect(try vault.item(service: "s", account: "a").label == "L")
        #expect(throws: VaultError.invalidArgument(.negativeSchemaVersion)) {
            try vault.setValue(VaultEncodedValue(schemaVersion: -1, json: SecretBytes("1")), service: "s", account: "b")
        }
        #expect(throws: VaultError.invalidArgument(.negativeSchemaVersion)) {
            try vault.setValue(1, schemaVersion: -1, service: "s", account: "b")
        }
        #expect(try !vault.contains(service: "s", account: "b"))
    }

    @Test func aNewerEncodingVersionIsRefusedByVersion() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("vaultkit-value 2 0\n{}", service: "s", account: "v2")
        try vault.set("vaultkit-value 17\nwhatever comes in version 17", service: "s", account: "v17")
        #expect(throws: VaultError.unsupportedValueEncoding(version: 2)) { try vault.value([String: Int].self, service: "s", account: "v2") }
        #expect(throws: VaultError.unsupportedValueEncoding(version: 17)) { try vault.entry(service: "s", account: "v17")?.encodedValue() }
        #expect(try vault.entry(service: "s", account: "v2")?.holdsValue == true)
    }

    @Test func whatIsNotAValueOfTheTypeIsNotDecodable() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.set("plain text", service: "s", account: "plain")
        try vault.set(#"{"user":"alice"}"#, service: "s", account: "json")
        try vault.set("vaultkit-value x 0\n{}", service: "s", account: "bad-version")
        try vault.set("vaultkit-value 1\n{}", service: "s", account: "no-schema")
        try vault.set("vaultkit-value 1 -1\n{}", service: "s", account: "negative-schema")
        try vault.set("vaultkit-value 1 0\n", service: "s", account: "empty-json")
        try vault.setValue(["user": "alice"], service: "s", account: "other-type")
        for account in ["plain", "json", "bad-version", "no-schema", "negative-schema", "empty-json", "other-type"] {
            #expect(throws: VaultError.valueNotDecodable, "\(account)") { try vault.value(Login.self, service: "s", account: account) }
        }
        #expect(try vault.entry(service: "s", account: "plain")?.holdsValue == false)
        #expect(throws: VaultError.itemNotFound) { try vault.value(Login.self, service: "s", account: "missing") }
    }

    @Test func aValueThatCannotBeEncodedWritesNothing() throws {
        struct Refuses: Encodable {
            struct No: Error {}
            func encode(to encoder: any Encoder) throws { throw No() }
        }
        let (vault, _) = try Fixtures.passphraseVault()
        #expect(throws: VaultError.valueNotEncodable) { try vault.setValue(Refuses(), service: "s", account: "a") }
        #expect(throws: VaultError.valueNotEncodable) { try vault.setValue(Double.nan, service: "s", account: "a") }
        #expect(try vault.items().isEmpty)
    }

    @Test func noErrorOrDescriptionShowsTheValue() throws {
        struct Other: Decodable { var user: Int }
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.setValue(Self.login, service: "s", account: "a")
        do {
            _ = try vault.value(Other.self, service: "s", account: "a")
            Issue.record("decoded as another type")
        } catch {
            #expect(error == .valueNotDecodable)
            #expect(!"\(error)".contains("alice") && !String(reflecting: error).contains("alice"))
        }
        let entry = try #require(try vault.entry(service: "s", account: "a"))
        let stored = try entry.encodedValue()
        var dumped = ""
        dump(entry, to: &dumped)
        dump(stored, to: &dumped)
        for text in ["\(entry)", String(reflecting: entry), "\(stored)", String(reflecting: stored), dumped] {
            #expect(!text.contains("t0k3n"), "\(text)")
        }
        #expect("\(stored)".contains("schemaVersion: 0"))
        #expect("\(entry)".contains("account: \"a\""))
    }

    @Test func aBatchWritesValuesInItsTransaction() throws {
        let (vault, _) = try Fixtures.passphraseVault()
        try vault.batch { batch in
            try batch.setValue(Self.login, schemaVersion: 2, service: "s", account: "a")
            try batch.setValue([1, 2], service: "s", account: "b")
        }
        #expect(try vault.value(Login.self, service: "s", account: "a") == Self.login)
        #expect(try vault.value([Int].self, service: "s", account: "b") == [1, 2])
        #expect(try vault.entry(service: "s", account: "a")?.encodedValue().schemaVersion == 2)
    }
}
