import Foundation
import Testing
import TestTraits
import VaultKit
import VaultTransfer

/// A `\u` escape of half a surrogate pair names no character, so it has no UTF-8: the one
/// JSON reader refuses it with a typed error wherever JSON is read (import files here,
/// Docker's credential protocol in the CLI's `LoneSurrogateTests`), instead of storing
/// U+FFFD, which would make two different secrets one.
@Suite(.offCooperativePool) struct LoneSurrogateTests {
    static func read(_ json: String) throws -> JSONValue {
        try Data(json.utf8).withUnsafeBytes { try JSONReader.parse($0) }
    }

    @Test(arguments: [
        #"["\ud800"]"#,          // a high half at the end of the string
        #"["\ud800x"]"#,         // a high half before a plain character
        #"["\ud800\u0041"]"#,    // a high half before an escape that is not a low half
        #"["\ud800\ud800"]"#,    // two high halves
        #"["\udc00"]"#,          // a low half alone
        #"["\udfff\ud800"]"#,    // a pair in the wrong order
        #"{"\ud800":1}"#,        // in a member name
    ])
    func theReaderRefusesEveryLoneHalf(json: String) throws {
        let error = try #require(throws: JSONSyntaxError.self) { try Self.read(json) }
        #expect(error.reason == .unpairedSurrogate)
        #expect(error.description == "invalid JSON at line 1: an unpaired surrogate escape")
    }

    @Test func aPairIsOneCharacter() throws {
        let value = try Self.read(#"["\ud83d\udd11", "\uD83D\uDD11"]"#)
        let strings = try #require(value.array).map { $0.secret?.string() }
        #expect(strings == ["🔑", "🔑"])
    }

    /// Through the library's public entry point: each JSON format refuses the file, and
    /// keeps the reader's reason.
    @Test(arguments: [
        (TransferFormat.vaultKitJSON, #"{"format":"vaultkit-export","version":1,"items":[{"service":"s","account":"a","secret":"\ud800"}]}"#),
        (TransferFormat.bitwarden, #"{"encrypted":false,"items":[{"type":1,"name":"n","login":{"username":"u","password":"\udc00"}}]}"#),
    ])
    func everyJSONImportFormatRefusesTheFile(format: TransferFormat, json: String) throws {
        let error = try #require(throws: TransferError.self) { try Data(json.utf8).withUnsafeBytes { try format.read($0) } }
        #expect(error.syntaxError?.reason == .unpairedSurrogate)
        #expect(error.description == "invalid JSON at line 1: an unpaired surrogate escape")
    }
}
