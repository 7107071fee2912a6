import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Moving a raw key between processes as text.
@Suite(.offCooperativePool) struct VaultKeyEncodingTests {
    let bytes = Data((0..<32).map { UInt8($0 * 7 + 1) })

    @Test func hexAndBase64RoundTripAndMatchFoundation() throws {
        let key = try VaultKey(bytes)
        let hex = key.hexEncodedString()
        #expect(hex == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(key.base64EncodedString() == bytes.base64EncodedString())
        #expect(try VaultKey(hex: hex) == key)
        #expect(try VaultKey(hex: " \(hex.uppercased())\n") == key)
        #expect(try VaultKey(base64: key.base64EncodedString()) == key)
    }

    @Test func aKeyFromTextOpensTheVault() throws {
        let directory = TestPaths.temporaryDirectory()
        let key = VaultKey.random()
        let vault = try Vault.create(at: "\(directory)/k.vault", key: key)
        try vault.set("s", service: "svc", account: "a")
        vault.close()
        let reopened = try Vault.open(at: "\(directory)/k.vault", key: try VaultKey(base64: key.base64EncodedString()))
        #expect(try reopened.string(service: "svc", account: "a") == "s")
    }

    @Test(arguments: ["", "00", String(repeating: "0", count: 63), String(repeating: "0", count: 65),
                      String(repeating: "g", count: 64), String(repeating: "0", count: 62) + " 0"])
    func badHexIsATypedErrorThatDoesNotEchoTheInput(_ text: String) {
        #expect(throws: VaultError.invalidArgument(.keyNotHex)) { try VaultKey(hex: text) }
    }

    @Test(arguments: ["", "AAAA", Data(count: 31).base64EncodedString(), Data(count: 33).base64EncodedString(),
                      Data(count: 32).base64EncodedString().replacingOccurrences(of: "=", with: "")])
    func badBase64IsATypedError(_ text: String) {
        #expect(throws: VaultError.invalidArgument(.keyNotBase64)) { try VaultKey(base64: text) }
    }

    @Test func descriptionsNeverShowTheKey() throws {
        let key = try VaultKey(bytes)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            #expect(!text.contains(key.hexEncodedString()))
            #expect(!text.contains(key.base64EncodedString()))
        }
    }
}
