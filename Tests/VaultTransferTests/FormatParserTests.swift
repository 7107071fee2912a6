import Foundation
import Testing
import TestTraits
import VaultKit
@testable import VaultTransfer
import TestSupport

/// The import formats' parsers on the small fixture files in Tests/Fixtures/Import,
/// written after each manager's documented export layout.
@Suite(.offCooperativePool) struct FormatParserTests {
    /// A fixture's items as (service, account, label, secret text), in file order.
    typealias Row = (service: String, account: String, label: String?, secret: String?)

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: FormatFixtures.path(name)))
    }

    static func rows(_ contents: ImportContents) -> [Row] {
        contents.items.map { ($0.service, $0.account, $0.label, $0.secret.string()) }
    }

    static func expect(_ actual: [Row], _ expected: [Row], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual.count == expected.count, sourceLocation: sourceLocation)
        for (a, e) in zip(actual, expected) {
            #expect(a.service == e.service && a.account == e.account && a.label == e.label && a.secret == e.secret,
                    "\(a) != \(e)", sourceLocation: sourceLocation)
        }
    }

    static func parse(_ data: Data, _ format: TransferFormat) throws -> ImportContents {
        try data.withUnsafeBytes { bytes in try format.read(bytes) }
    }

    @Test func bitwardenLoginsMapToHostUsernameNamePassword() throws {
        let contents = try Self.parse(try Self.fixture("bitwarden.json"), .bitwarden)
        Self.expect(Self.rows(contents), [
            ("login.example.com", "alice@example.com", "Example Login", "p@ss \"quoted\" é\\"),
            ("No URI at all", "bob", "No URI at all", "hunter2"),
            ("second.example.org", "", "Key 🔑", "🔑-key"),
        ])
        // The secure note and the login without a password.
        #expect(contents.skipped == 2)
    }

    @Test func anEncryptedBitwardenExportIsRefused() throws {
        let data = Data(#"{"encrypted": true, "passwordProtected": true, "data": "2.abc"}"#.utf8)
        #expect(throws: TransferError.self) { try Self.parse(data, .bitwarden) }
        let error = try #require(throws: TransferError.self) { try Self.parse(data, .bitwarden) }
        #expect(error.description.contains("encrypted"))
    }

    @Test func keePassXCEntriesMapToHostOrTitle() throws {
        let contents = try Self.parse(try Self.fixture("keepassxc.csv"), .keePassXC)
        Self.expect(Self.rows(contents), [
            ("github.com", "alice", "GitHub", "gh-secret, with comma"),
            ("db server", "root", "db server", "quote \" inside"),
        ])
        #expect(contents.skipped == 1)
    }

    @Test func chromeCSVKeepsTheNameAsLabel() throws {
        let contents = try Self.parse(try Self.fixture("chrome.csv"), .chromeCSV)
        Self.expect(Self.rows(contents), [
            ("example.com", "alice", "example.com", "s3cret"),
            ("app.example.com", "bob", "app.example.com", "pa,ss"),
        ])
        #expect(contents.skipped == 1)
    }

    @Test func firefoxCSVWithCRLFLinesAndAnAndroidEntry() throws {
        let contents = try Self.parse(try Self.fixture("firefox.csv"), .firefoxCSV)
        Self.expect(Self.rows(contents), [
            ("www.mozilla.org", "fox", nil, "firefox-pass"),
            ("org.mozilla.fenix", "mobile", nil, "m0bile"),
        ])
        #expect(contents.skipped == 0)
    }

    @Test func vaultKitJSONRestoresGenericDataAndBinarySecrets() throws {
        let contents = try Self.parse(try Self.fixture("vaultkit.json"), .vaultKitJSON)
        Self.expect(Self.rows(contents), [
            ("api.example.com", "alice", "Example API", "line one\nline two"),
            ("binary", "", nil, nil),
        ])
        #expect(contents.items[0].generic == Data("client-id=42".utf8))
        #expect(contents.items[1].generic == Data([0x00, 0xFF]))
        #expect(contents.items[1].secret == SecretBytes([0xFF, 0x00, 0x01]))
    }

    @Test func theExportWritesBase64ThatReadsBack() {
        for length in 0..<8 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 97 + 200) }
            var writer = JSONWriter()
            bytes.withUnsafeBytes { writer.base64($0) }
            let written = writer.buffer.text
            #expect(written == "\"" + Data(bytes).base64EncodedString() + "\"")
        }
    }

    /// Names must be UTF-8; the message names the place, never the bytes.
    @Test func aNameThatIsNotUTF8IsRefused() throws {
        let csv = Data("name,url,username,password\nx,https://a.example,".utf8) + Data([0xC3, 0x28]) + Data(",pw-secret\n".utf8)
        let error = try #require(throws: TransferError.self) {
            try Self.parse(csv, .chromeCSV)
        }
        #expect(error.description == "Chrome CSV line 2: the username is not valid UTF-8")
        let json = Data(#"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":""#.utf8)
            + Data([0xFF]) + Data(#"","secret":"x"}]}"#.utf8)
        let jsonError = try #require(throws: TransferError.self) { try Self.parse(json, .vaultKitJSON) }
        #expect(jsonError.description == "VaultKit export item 1: the account is not valid UTF-8")
    }

    @Test(arguments: [
        ("name,url,username,password\n\"unterminated,x,y,z\n", "invalid CSV at line 2: a quoted field is not terminated"),
        ("name,url,username,password\na,b\"c,d,e\n", "invalid CSV at line 2: a quote inside an unquoted field"),
        ("name,url,username,password\na,b,c\n", "Chrome CSV line 2: 3 fields, but the header has 4"),
        ("name,url,user,password\na,b,c,d\n", "the Chrome CSV file has no 'username' column"),
        ("", "the Chrome CSV file is empty"),
    ])
    func malformedCSVIsRefusedNamingTheLine(input: String, message: String) throws {
        let error = try #require(throws: TransferError.self) {
            try Self.parse(Data(input.utf8), .chromeCSV)
        }
        #expect(error.description == message)
    }

    @Test(arguments: [
        (#"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":"a","secret":"x"}"#, "invalid JSON at line 1: the JSON ends early"),
        ("{\"format\":\"vaultkit-export\",\n\"version\":1,\n\"items\":[\"\\ud800\"]}", "invalid JSON at line 3: an unpaired surrogate escape"),
        (#"{"format":"vaultkit-export","version":2,"items":[]}"#, "unsupported VaultKit export version; this vault reads version 1"),
        (#"{"format":"other","version":1,"items":[]}"#, "not a VaultKit export: \"format\" is not \"vaultkit-export\""),
        (#"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":"a"}]}"#, "VaultKit export item 1: no secret (\"secret\" or \"secretBase64\")"),
        (#"{"format":"vaultkit-export","version":1,"items":[{"service":"","account":"a","secret":"x"}]}"#, "VaultKit export item 1: the service is empty"),
        (#"{"format":"vaultkit-export","version":1,"items":[]} x"#, "invalid JSON at line 1: unexpected data after the JSON document"),
        (#"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":"a","secret":"a\x"}]}"#, "invalid JSON at line 1: an invalid escape in a string"),
    ])
    func malformedJSONIsRefused(input: String, message: String) throws {
        let error = try #require(throws: TransferError.self) { try Self.parse(Data(input.utf8), .vaultKitJSON) }
        #expect(error.description == message)
    }

    @Test func jsonStringsDecodeEscapesAndSurrogatePairs() throws {
        let value = try Data(#"["a\"b\\c\/\b\f\n\r\t\u00e9\ud83d\udd11", -1.5e2, true, false, null]"#.utf8).withUnsafeBytes { (bytes) throws(JSONSyntaxError) in
            try JSONReader.parse(bytes)
        }
        let array = try #require(value.array)
        #expect(array[0].secret?.string() == "a\"b\\c/\u{8}\u{c}\n\r\té🔑")
        guard case .number(-150) = array[1], case .bool(true) = array[2], case .bool(false) = array[3] else {
            Issue.record("numbers and literals: \(array)")
            return
        }
        #expect(array[4].isNull)
    }

    @Test func urlHostsAreMatchedTheWayBrowsersShowThem() {
        #expect(ImportNames.host(ofURL: "https://Login.Example.com:8443/path?q=1") == "login.example.com")
        #expect(ImportNames.host(ofURL: "example.org/login") == "example.org")
        #expect(ImportNames.host(ofURL: "  ") == nil)
        #expect(ImportNames.host(ofURL: "android://aGFzaA==@org.mozilla.fenix/") == "org.mozilla.fenix")
        #expect(ImportNames.host(ofURL: "localhost:8080/admin") == "localhost")
        #expect(ImportNames.host(ofURL: "mailto:alice@example.com") == nil)
    }

    /// A browser reads a backslash in an http(s) URL as a slash (WHATWG): it sends the
    /// password for `https://evil.example\@github.com/` to evil.example, so that is the
    /// item's service, not github.com; user info ends at the last `@` of the authority.
    @Test(arguments: [
        ("https://evil.example\\@github.com/", "evil.example"),
        ("https://evil.example\\github.com", "evil.example"),
        ("http:\\\\evil.example\\@github.com", "evil.example"),
        ("https://user:pa@ss@login.example.com/", "login.example.com"),
        ("https:evil.example/@github.com", "evil.example"),
        ("https://github.com@evil.example/", "evil.example"),
        ("https://[::1]:8443/", "[::1]"),
        ("https://%65vil.example/", "evil.example"),
        ("https://evil.example%2F@github.com/", "github.com"),
        ("https://evil%2Fexample/", nil),
    ])
    func urlHostsAreTheHostsABrowserSees(url: String, host: String?) {
        #expect(ImportNames.host(ofURL: url) == host)
    }
}
