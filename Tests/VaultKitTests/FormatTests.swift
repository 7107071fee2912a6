import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// docs/FORMAT.md is a specification: an independent reader written from it alone
/// (docs/reference_reader.py: Python's sqlite3 + PyNaCl) must read what VaultKit writes.
@Suite(.offCooperativePool) struct FormatTests {
    static let reader = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/reference_reader.py").path

    static var readerIsAvailable: Bool {
        (try? ChildProcess.run("/usr/bin/env", ["python3", "-c", "import nacl.pwhash"]))?.status == 0
    }

    struct ReadItem: Decodable, Equatable {
        var service: String
        var account: String
        var label: String?
        var generic: String?
        var created: Int64
        var modified: Int64
        var secret: String
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test(.enabled(if: readerIsAvailable, "needs python3 with PyNaCl (scripts/test.sh installs it)"))
    func anIndependentReaderDecryptsAPassphraseVault() throws {
        let (vault, path) = try Fixtures.passphraseVault(passphrase: "pässphrase 🔑")
        let secret = Data([0, 1, 2, 255, 10]) + Data("비밀".utf8)
        try vault.set(secret, service: "api.example.com", account: "alice", label: "Example", generic: Data([7, 8]))
        try vault.set("plain", service: "b\tservice", account: "")
        let expected = try vault.items()
        vault.close()

        let result = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path],
                                          environment: ChildProcess.cleanEnvironment(["VAULT_PASSPHRASE": "pässphrase 🔑"]))
        #expect(result.status == 0, "\(result.stderr)")
        let items = try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(ReadItem.self, from: Data($0.utf8)) }
        #expect(items.count == 2)
        #expect(items.map(\.service) == expected.map(\.service))
        #expect(items.map(\.account) == expected.map(\.account))
        #expect(items[0].secret == Self.hex(secret))
        #expect(items[0].label == "Example")
        #expect(items[0].generic == "0708")
        #expect(items[0].created == Int64((expected[0].created.timeIntervalSince1970 * 1000).rounded()))
        #expect(items[1].secret == Self.hex(Data("plain".utf8)))
    }

    @Test(.enabled(if: readerIsAvailable, "needs python3 with PyNaCl (scripts/test.sh installs it)"))
    func anIndependentReaderDecryptsARekeyedRawKeyVaultAndRejectsAMovedRecord() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("one", service: "s", account: "a")
        try vault.set("two", service: "s", account: "b")
        try vault.rekey()
        vault.close()
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let result = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--key-file", keyFile])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 2)

        RawDatabase(path).execute("""
            CREATE TEMP TABLE copy AS SELECT lookup_id, nonce, sealed FROM vault_items;
            UPDATE vault_items SET
                nonce = (SELECT nonce FROM copy WHERE copy.lookup_id != vault_items.lookup_id),
                sealed = (SELECT sealed FROM copy WHERE copy.lookup_id != vault_items.lookup_id);
            """)
        let tampered = try ChildProcess.run("/usr/bin/env", ["python3", Self.reader, path, "--key-file", keyFile])
        #expect(tampered.status == 1)
        #expect(tampered.stderr.contains("does not belong"))
    }
}
