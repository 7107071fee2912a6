import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// A lone `set` in a bucket this process verified is prepared before its transaction and
/// sent in one round trip (`PreparedSet`): what that saves, and that it never writes over
/// a state it was not prepared from (another host's write, a re-key, an attacker's change).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresPreparedSetTests {
    /// The round trips `body` made on `storage`'s connection.
    private func roundTrips(on storage: PostgresVaultStorage, _ body: () throws -> Void) throws -> Int {
        let before = storage.connection.roundTrips
        try body()
        return storage.connection.roundTrips - before
    }

    /// Every `set` after the first is one round trip, whatever other tests commit on the
    /// server meanwhile (`aCommitElsewhereOnTheServerKeepsASetAtOneRoundTrip`).
    @Test func aSteadySetOfAnExistingItemIsOneRoundTrip() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        try vault.set("first", service: "s", account: "a")
        var counts: [Int] = []
        for round in 0..<50 {
            counts.append(try roundTrips(on: storage) { try vault.set("value \(round)", service: "s", account: "a") })
        }
        #expect(counts == Array(repeating: 1, count: 50))
        #expect(try vault.string(service: "s", account: "a") == "value 49")
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// A new item in a verified bucket: its absence is known, so it is inserted in one
    /// round trip too.
    @Test func aNewItemInAVerifiedBucketIsOneRoundTrip() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        var counts: [Int] = []
        for round in 0..<30 {
            // Verifies (and keeps) the bucket of ("s", "n<round>") without writing it.
            #expect(throws: VaultError.itemNotFound) { try vault.secret(service: "s", account: "n\(round)") }
            counts.append(try roundTrips(on: storage) { try vault.set("new", service: "s", account: "n\(round)") })
        }
        #expect(counts == Array(repeating: 1, count: 30))
        #expect(try Vault.open(postgres: location, key: key).verify() == 30)
    }

    /// After a batch imported many items into kept buckets, a `set` of any of them is
    /// prepared from what the batch left kept: one round trip.
    @Test func aSetAfterABatchImportIsOneRoundTrip() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        var counts: [Int] = []
        for round in 0..<3 {
            try vault.batch { batch in
                for index in 0..<500 { try batch.set("v", service: "s\(index % 20)", account: "a\(round)-\(index)") }
            }
            counts.append(try roundTrips(on: storage) { try vault.set("w", service: "s7", account: "a\(round)-327") })
        }
        #expect(counts == [1, 1, 1])
        #expect(try Vault.open(postgres: location, key: key).verify() >= 500)
    }

    /// A `set` that gives no label or generic data keeps the stored ones and the creation
    /// date, which it takes from the kept row's record.
    @Test func aPreparedSetKeepsTheStoredAttributes() throws {
        let (vault, storage, _, _) = try TestServer.countedVault()
        try vault.set("one", service: "s", account: "a", label: "Label", generic: Data([1, 2, 3]))
        let created = try vault.item(service: "s", account: "a").created
        var counts: [Int] = []
        for round in 0..<20 {
            counts.append(try roundTrips(on: storage) { try vault.set("v\(round)", service: "s", account: "a") })
        }
        #expect(counts == Array(repeating: 1, count: 20))
        let item = try vault.item(service: "s", account: "a")
        #expect(item.label == "Label")
        #expect(item.generic == Data([1, 2, 3]))
        #expect(item.created == created)
        #expect(try vault.string(service: "s", account: "a") == "v19")
    }

    /// A commit elsewhere on the server (here another vault's, before every `set`) moves
    /// the snapshot version, which reads take as "verify again"; the rows kept for prepared
    /// sets stay, so every `set` is still one round trip, and the vault stays exact.
    @Test func aCommitElsewhereOnTheServerKeepsASetAtOneRoundTrip() throws {
        let (vault, storage, location, key) = try TestServer.countedVault()
        let elsewhere = try Vault.create(postgres: TestServer.location(), key: VaultKey.random())
        try vault.set("first", service: "s", account: "a")
        try vault.set("second", service: "s", account: "a")
        var counts: [Int] = []
        for round in 0..<20 {
            try elsewhere.set("e\(round)", service: "e", account: "e")
            counts.append(try roundTrips(on: storage) { try vault.set("value \(round)", service: "s", account: "a") })
        }
        #expect(counts == Array(repeating: 1, count: 20))
        #expect(try vault.string(service: "s", account: "a") == "value 19")
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// An attacker rolls back one item's row; a read of it reports the tampering. A `set`
    /// of another item in the same bucket then reports it too, and writes nothing: the
    /// rows kept for prepared sets are dropped once a check has failed, even though the
    /// header, that item's row and the bucket's digest are all still as kept.
    @Test func aSetInABucketFoundTamperedIsRefused() throws {
        let (vault, _, location, _) = try TestServer.countedVault()
        let attacker = try TestServer.attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        func lookupIDs() throws -> Set<[UInt8]> {
            try attacker.query("SELECT lookup_id FROM vaultkit_items WHERE vault = $1", [name]) { rows in
                Set((0..<rows.count).map { rows.array($0, 0) })
            }
        }
        func bucket(_ lookupID: [UInt8]) -> Int { (Int(lookupID[0]) << 2) | (Int(lookupID[1]) >> 6) }
        // Items one by one until two share a bucket (about 40 by the birthday bound).
        var accountOf: [[UInt8]: String] = [:]
        var pair: (victim: (account: String, lookupID: [UInt8]), other: String)?
        for index in 0..<500 where pair == nil {
            let account = "a\(index)"
            let known = Set(accountOf.keys)
            try vault.set("v", service: "s", account: account)
            guard let new = try lookupIDs().subtracting(known).first else { Issue.record("no new row"); return }
            if let sharing = accountOf.first(where: { bucket($0.key) == bucket(new) }) {
                pair = ((sharing.value, sharing.key), account)
            }
            accountOf[new] = account
        }
        guard let pair else { Issue.record("no two items in one bucket"); return }
        let old = try attacker.query("SELECT nonce, sealed FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2",
                                     [name, .bytes(pair.victim.lookupID)]) { ($0.array(0, 0), $0.array(0, 1)) }
        try vault.set("newer", service: "s", account: pair.victim.account)
        try vault.set("w0", service: "s", account: pair.other)
        _ = try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                [name, .bytes(pair.victim.lookupID), .bytes(old.0), .bytes(old.1)])
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.secret(service: "s", account: pair.victim.account) }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.set("w1", service: "s", account: pair.other) }
        let victimNonce = try attacker.query("SELECT nonce FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2",
                                             [name, .bytes(pair.victim.lookupID)]) { $0.array(0, 0) }
        #expect(victimNonce == old.0)
    }

    /// Another handle writes between this one's verification and its `set`: the header's
    /// generation moved on, so the prepared `set` writes nothing and the `set` runs as any
    /// other. Both writes are kept, and the manifest proves every row.
    @Test func anotherWriterMakesAPreparedSetStale() throws {
        let (vault, _, location, key) = try TestServer.countedVault()
        let other = try Vault.open(postgres: location, key: key)
        try vault.set("a0", service: "s", account: "a")
        for round in 0..<10 {
            try other.set("b\(round)", service: "s", account: "b")
            try vault.set("a\(round)", service: "s", account: "a")
            try other.set("c\(round)", service: "t", account: "c\(round)")
        }
        #expect(try vault.string(service: "s", account: "b") == "b9")
        #expect(try other.string(service: "s", account: "a") == "a9")
        #expect(try Vault.open(postgres: location, key: key).verify() == 12)
    }

    /// An attacker puts an older copy of the item's row back: the row in place is not the
    /// one kept, so nothing is written over it, and the `set` (verifying afresh) reports
    /// the tampering instead of hiding it.
    @Test func aRolledBackRowIsNotWrittenOverSilently() throws {
        let (vault, _, location, _) = try TestServer.countedVault()
        try vault.set("old", service: "s", account: "a")
        let attacker = try TestServer.attacker()
        let old = try attacker.query("SELECT lookup_id, nonce, sealed FROM vaultkit_items WHERE vault = $1", [.text(location.vaultName)]) {
            ($0.array(0, 0), $0.array(0, 1), $0.array(0, 2))
        }
        try vault.set("new", service: "s", account: "a")
        _ = try attacker.change("UPDATE vaultkit_items SET nonce = $3, sealed = $4 WHERE vault = $1 AND lookup_id = $2",
                                [.text(location.vaultName), .bytes(old.0), .bytes(old.1), .bytes(old.2)])
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.set("newer", service: "s", account: "a") }
        // Nothing of the prepared set was written: the row in place is still the old copy.
        // (The item's row: the kept version of "old" is a row of its own.)
        let stored = try attacker.query("SELECT nonce FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2",
                                        [.text(location.vaultName), .bytes(old.0)]) { $0.array(0, 0) }
        #expect(stored == old.1)
    }

    /// An attacker deletes another row while a handle holds what it verified: a prepared
    /// `set` of an untouched item may still commit (it checks only what it replaces), but
    /// what reads rely on is not carried past the attacker's commit, so the deletion is
    /// reported by the next verification.
    @Test func aDeletionBehindAPreparedSetIsStillDetected() throws {
        let (vault, _, location, _) = try TestServer.countedVault()
        for account in ["a", "b", "c", "d"] { try vault.set("v", service: "s", account: account) }
        for account in ["a", "b", "c", "d"] { _ = try vault.secret(service: "s", account: account) }
        let attacker = try TestServer.attacker()
        let victim = try attacker.query("SELECT lookup_id FROM vaultkit_items WHERE vault = $1 ORDER BY lookup_id LIMIT 1", [.text(location.vaultName)]) {
            $0.array(0, 0)
        }
        _ = try attacker.change("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [.text(location.vaultName), .bytes(victim)])
        // Some of these may verify afresh and report the deletion themselves.
        for account in ["a", "b", "c", "d"] { _ = try? vault.set("w", service: "s", account: account) }
        #expect(throws: VaultError.tampered(reason: .rowsChanged)) { try vault.verify() }
    }

    /// Another handle re-keys: the prepared `set`, sealed under the old keys, is refused by
    /// the tag check, and the `set` follows the new keys.
    @Test func aRekeyMakesAPreparedSetStale() throws {
        let (vault, _, location, key) = try TestServer.countedVault()
        try vault.set("a", service: "s", account: "a")
        try vault.set("a1", service: "s", account: "a")
        try Vault.open(postgres: location, key: key).rekey()
        try vault.set("a2", service: "s", account: "a")
        #expect(try vault.string(service: "s", account: "a") == "a2")
        #expect(try Vault.open(postgres: location, key: key).verify() == 1)
    }

    /// A passphrase change re-tags the root over a new header: a `set` prepared from the
    /// root kept before would carry a tag over the old header, so none is prepared until
    /// a write records the new root.
    @Test func aPassphraseChangeIsFollowed() throws {
        let location = try TestServer.location()
        let vault = try Vault.create(postgres: location, passphrase: SecretBytes("one"), kdf: TestServer.cheapKDF)
        try vault.set("a", service: "s", account: "a")
        try vault.set("a1", service: "s", account: "a")
        try vault.changePassphrase(to: "two", kdf: TestServer.cheapKDF)
        try vault.set("a2", service: "s", account: "a")
        try vault.set("a3", service: "s", account: "a")
        #expect(try Vault.open(postgres: location, passphrase: SecretBytes("two")).verify() == 1)
    }

    /// Prepared sets, sets in batches, deletes and another handle's writes, interleaved at
    /// random over a few items: every value is the last written, and the manifest proves
    /// every row (a kept row or digest that drifted from the stored one would fail here).
    @Test func interleavedWritesKeepTheManifestExact() throws {
        let (vault, _, location, key) = try TestServer.countedVault()
        let other = try Vault.open(postgres: location, key: key)
        var model: [String: String] = [:]
        var generator = SystemRandomNumberGenerator()
        let accounts = (0..<12).map { "a\($0)" }
        for step in 0..<300 {
            let account = accounts.randomElement(using: &generator)!
            let value = "v\(step)"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0:
                _ = try other.delete(service: "s", account: account)
                model[account] = nil
            case 1:
                try other.set(value, service: "s", account: account)
                model[account] = value
            case 2:
                _ = try vault.delete(service: "s", account: account)
                model[account] = nil
            case 3:
                let second = accounts.randomElement(using: &generator)!
                try vault.batch { batch in
                    try batch.set(value, service: "s", account: account)
                    try batch.set(value + "b", service: "s", account: second)
                }
                model[account] = value
                model[second] = value + "b"
            case 4:
                #expect(try vault.items(service: "s").count == model.count)
            default:
                try vault.set(value, service: "s", account: account)
                model[account] = value
            }
        }
        for (account, value) in model { #expect(try vault.string(service: "s", account: account) == value) }
        #expect(try Vault.open(postgres: location, key: key).verify() == model.count)
        #expect(try vault.verify() == model.count)
    }
}
