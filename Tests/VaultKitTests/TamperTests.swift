import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Whoever can write the file must not be able to make VaultKit return a wrong secret,
/// and whoever can read it must learn nothing a user typed.
@Suite(.offCooperativePool) struct TamperTests {
    @Test func aRecordMovedToAnotherRowIsRejected() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("alice-secret", service: "s", account: "alice")
        try vault.set("mallory-secret", service: "s", account: "mallory")
        vault.close()
        // Swap the sealed records (and their nonces) of the two rows.
        let database = RawDatabase(path)
        database.execute("""
            CREATE TEMP TABLE copy AS SELECT lookup_id, nonce, sealed FROM vault_items;
            UPDATE vault_items SET
                nonce = (SELECT nonce FROM copy WHERE copy.lookup_id != vault_items.lookup_id),
                sealed = (SELECT sealed FROM copy WHERE copy.lookup_id != vault_items.lookup_id);
            """)
        let reopened = try Vault.open(at: path, key: key)
        // The manifest, which names each row's nonce, rejects the swap before the record's
        // own binding check would (that check is shown by FormatTests' independent reader).
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try reopened.secret(service: "s", account: "alice")
        }
        #expect(throws: VaultError.self) { try reopened.items() }
    }

    @Test func aRowCopiedFromAnotherVaultIsRejected() throws {
        let (victim, victimPath, victimKey) = try Fixtures.keyVault()
        try victim.set("real", service: "s", account: "alice")
        victim.close()
        let (attacker, attackerPath, _) = try Fixtures.keyVault()
        try attacker.set("forged", service: "s", account: "alice")
        attacker.close()
        let forged = RawDatabase(attackerPath).rows("SELECT nonce, sealed FROM vault_items")[0]
        let victimNonce = RawDatabase(victimPath).rows("SELECT nonce FROM vault_items")[0][0]

        // The whole row: its nonce is not the one the manifest names.
        RawDatabase(victimPath).execute("UPDATE vault_items SET nonce = x'\(forged[0])', sealed = x'\(forged[1])'")
        let reopened = try Vault.open(at: victimPath, key: victimKey)
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) {
            try reopened.secret(service: "s", account: "alice")
        }
        reopened.close()

        // Only the sealed record, under the victim's nonce: it fails authentication.
        RawDatabase(victimPath).execute("UPDATE vault_items SET nonce = x'\(victimNonce)'")
        let again = try Vault.open(at: victimPath, key: victimKey)
        #expect(throws: VaultError.tampered(reason: .itemFailedAuthentication)) {
            try again.secret(service: "s", account: "alice")
        }
    }

    @Test func anyModifiedByteOfARecordIsDetected() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("secret", service: "s", account: "a")
        vault.close()
        let row = RawDatabase(path).rows("SELECT sealed FROM vault_items")[0][0]
        let byteCount = row.count / 2
        for index in 0..<byteCount {
            var bytes = Array(row.utf8)
            // Flip the low bit of one hex digit pair: one bit of byte `index`.
            let position = index * 2 + 1
            bytes[position] = Array(String(Int(String(UnicodeScalar(bytes[position])), radix: 16)! ^ 1, radix: 16).utf8)[0]
            RawDatabase(path).execute("UPDATE vault_items SET sealed = x'\(String(decoding: bytes, as: UTF8.self))'")
            let reopened = try Vault.open(at: path, key: key)
            #expect(throws: VaultError.tampered(reason: .itemFailedAuthentication)) {
                try reopened.secret(service: "s", account: "a")
            }
        }
    }

    /// The exhaustive version: every byte of a whole small vault file, flipped in turn.
    @Test func flippingAnyByteOfTheFileNeverYieldsAWrongSecret() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        try vault.set("the right secret", service: "svc", account: "alice", label: "L")
        try vault.set("another secret", service: "svc", account: "bob")
        vault.close()
        let original = Fixtures.bytes(of: path)
        let outcomes = Mutex<[String: Int]>([:])
        let wrongSecrets = Mutex<[Int]>([])
        let workers = 4
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let target = path + ".flipped\(worker)"
            for index in stride(from: worker, to: original.count, by: workers) {
                var bytes = original
                bytes[index] ^= 0x01
                Fixtures.write(bytes, to: target)
                let outcome: String
                do {
                    let opened = try Vault.open(at: target, key: key, busyTimeout: .milliseconds(100))
                    let secret = try opened.string(service: "svc", account: "alice")
                    if secret != "the right secret" { wrongSecrets.withLock { $0.append(index) } }
                    outcome = "correct secret"
                } catch let error as VaultError {
                    outcome = "\(error)".prefix(while: { $0 != ":" }).description
                } catch {
                    outcome = "untyped error"
                }
                outcomes.withLock { $0[outcome, default: 0] += 1 }
                FileSystemCleanup.removeSideFiles(target)
            }
        }
        let counted = outcomes.withLock { $0 }
        print("byte-flip outcomes over \(original.count) bytes: \(counted)")
        #expect(wrongSecrets.withLock { $0 }.isEmpty, "flipped bytes that gave a different secret")
        #expect(counted["untyped error"] == nil)
        #expect(counted.values.reduce(0, +) == original.count)
        #expect((counted["correct secret"] ?? 0) > 0)
    }

    @Test func nothingAUserTypedIsInTheFileInTheClear() throws {
        let (vault, path) = try Fixtures.passphraseVault(passphrase: "passphrase-canary")
        let canaries = ["service-canary", "account-canary", "label-canary", "generic-canary", "secret-canary"]
        try vault.set("secret-canary", service: "service-canary", account: "account-canary",
                      label: "label-canary", generic: Data("generic-canary".utf8))
        func scan(_ file: String) {
            let contents = Data(Fixtures.bytes(of: file))
            for canary in canaries + ["passphrase-canary"] {
                #expect(contents.range(of: Data(canary.utf8)) == nil, "\(canary) in \(file)")
                #expect(contents.range(of: Data(canary.utf16.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] })) == nil)
            }
        }
        // While open (the write-ahead log holds the latest pages) and after close.
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) { scan(file) }
        vault.close()
        scan(path)
    }

    @Test func errorsAndDescriptionsNeverContainTheSecret() throws {
        let secret = SecretBytes("hunter2-canary")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        let key = VaultKey.random()
        #expect("\(key)" == "VaultKey(redacted)")

        let (vault, path, vaultKey) = try Fixtures.keyVault()
        try vault.set(secret, service: "s", account: "a")
        vault.close()
        RawDatabase(path).execute("UPDATE vault_items SET sealed = zeroblob(length(sealed))")
        do {
            _ = try Vault.open(at: path, key: vaultKey).secret(service: "s", account: "a")
            Issue.record("a zeroed record opened")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
            #expect(!String(reflecting: error).contains("hunter2"))
        }
    }
}
