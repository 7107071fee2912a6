import Foundation
import StorageConformance
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// The test server: `scripts/postgres-test-cluster.sh start` (run by scripts/test.sh)
/// exports its URL, without the password, which libpq reads from `PGPASSFILE`.
enum TestServer {
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["VAULTKIT_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw ConformanceFailure("""
                VAULTKIT_TEST_POSTGRES_URL is not set: these tests need a PostgreSQL server. Run \
                `eval "$(scripts/postgres-test-cluster.sh start)"` first (README, "When one machine is not enough").
                """)
        }
        return url
    }

    /// A vault name no other test uses.
    static func location() throws -> PostgresVaultLocation {
        try PostgresVaultLocation(url(), vaultName: "test-" + UUID().uuidString.lowercased())
    }

    /// A vault named `v` in a new schema of its own (the session's `search_path`), for a
    /// test that changes the tables themselves without touching other tests' vaults.
    static func locationInNewSchema() throws -> (location: PostgresVaultLocation, schema: String) {
        let url = try url()
        let schema = "s_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try attacker().execute("CREATE SCHEMA \(schema)")
        let location = try PostgresVaultLocation(url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)", vaultName: "v")
        return (location, schema)
    }

    /// A new vault, opened on a storage the test can count round trips on. The vault owns
    /// the storage (and keeps it alive, as the test keeps the vault); the test only reads
    /// its round-trip counter, on the same thread.
    static func countedVault() throws -> (vault: Vault, storage: PostgresVaultStorage, location: PostgresVaultLocation, key: VaultKey) {
        let location = try location()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        let (vault, storage) = try counted(location, key: key)
        return (vault, storage, location, key)
    }

    /// The vault at `location` opened on a storage the test can count on (as ``countedVault()``).
    static func counted(_ location: PostgresVaultLocation, key: VaultKey) throws -> (vault: Vault, storage: PostgresVaultStorage) {
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 5_000)
        let address = UInt(bitPattern: Unmanaged.passUnretained(storage).toOpaque())
        let vault = try Vault.open(storage, key: key)
        return (vault, Unmanaged<PostgresVaultStorage>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue())
    }

    /// The accounts of ``verifiedReader()``'s items (values `v-<account>`): 40, in about 40 buckets.
    static let readerAccounts = (0..<40).map { "a\($0)" }

    /// A reader of ``readerAccounts``, verified whole, its counted storage (as
    /// ``countedVault()``), and another process on the vault: what the tests of the
    /// incremental root check and the change marker start from.
    static func verifiedReader() throws -> (reader: Vault, storage: PostgresVaultStorage, writer: Vault, location: PostgresVaultLocation) {
        let (reader, storage, location, key) = try countedVault()
        try reader.batch { batch in
            for account in readerAccounts { try batch.set("v-" + account, service: "s", account: account) }
        }
        try reader.verify()
        return (reader, storage, try Vault.open(postgres: location, key: key), location)
    }

    /// Another connection, as an administrator or attacker would use, outside VaultKit.
    static func attacker() throws -> PostgresConnection {
        try PostgresConnection(conninfo: url(), password: nil, lockTimeoutMilliseconds: 10_000)
    }

    static let cheapKDF = try! KDFParameters(opsLimit: 1, memoryLimit: 8 * 1024)

    /// A vault unlocked by a raw key, and another connection's hands on its rows.
    static func fixture() throws -> StorageConformance.Fixture {
        let location = try location()
        let key = VaultKey.random()
        let attacker = try attacker()
        let name = PostgresConnection.Parameter.text(location.vaultName)
        return StorageConformance.Fixture(
            vault: try Vault.create(postgres: location, key: key),
            reopen: { try Vault.open(postgres: location, key: key) },
            rows: {
                try attacker.query("SELECT lookup_id, service_tag, nonce, sealed FROM vaultkit_items WHERE vault = $1", [name]) { rows in
                    (0..<rows.count).map { StoredRow(lookupID: rows.array($0, 0), serviceTag: rows.array($0, 1), nonce: rows.array($0, 2), sealed: rows.array($0, 3)) }
                }
            },
            replace: { row in
                _ = try attacker.change("""
                    INSERT INTO vaultkit_items (vault, lookup_id, service_tag, nonce, sealed) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (vault, lookup_id) DO UPDATE SET service_tag = EXCLUDED.service_tag, nonce = EXCLUDED.nonce, sealed = EXCLUDED.sealed
                    """, [name, .bytes(row.lookupID), .bytes(row.serviceTag), .bytes(row.nonce), .bytes(row.sealed)])
            },
            remove: { id in _ = try attacker.change("DELETE FROM vaultkit_items WHERE vault = $1 AND lookup_id = $2", [name, .bytes(id)]) }
        )
    }
}

/// The storage seam's conformance checks (Tests/StorageConformance) on a real PostgreSQL server.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresConformanceTests {
    @Test(arguments: StorageConformance.Check.allCases)
    func conformance(_ check: StorageConformance.Check) throws {
        try check.run(TestServer.fixture())
    }
}

/// Each guarantee of the seam's contract (Tests/StorageConformance, `StorageContract`) on
/// connections to one PostgreSQL vault.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresContractTests {
    @Test(arguments: StorageContract.Check.allCases)
    func contract(_ check: StorageContract.Check) throws {
        let location = try TestServer.location()
        try Vault.create(postgres: location, key: VaultKey.random()).close()
        try check.run(StorageContract.Fixture { try PostgresVaultStorage(location, lockTimeoutMilliseconds: 50) })
    }
}

/// The engine reached through its registration alone, by URL, as the CLI and agent reach it.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresEngineRegistrationTests {
    @Test func aVaultIsCreatedAndOpenedByItsURL() throws {
        VaultEngines.register(.postgres)
        let url = try TestServer.url() + "#registered-" + UUID().uuidString.lowercased()
        let key = VaultKey.random()
        let vault = try Vault.create(url: url, key: key)
        try vault.set("secret", service: "s", account: "a")
        #expect(vault.location.description.hasPrefix("postgres://") && vault.location.description.hasSuffix(String(url.drop { $0 != "#" })))
        let error = try #require(throws: VaultError.self) { try Vault.create(url: url, key: key) }
        #expect(error.code == .vaultAlreadyExists)
        #expect(error.description.hasPrefix("a vault already exists at postgres://"))
        // Schemes are case-insensitive.
        let reopened = try Vault.open(url: "POSTGRESQL" + url.drop { $0 != ":" }, key: key)
        #expect(try reopened.string(service: "s", account: "a") == "secret")
    }
}

/// What only the PostgreSQL engine has: vaults by name, the server's errors, many connections.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresVaultTests {
    @Test func aPassphraseVaultOpensChangesAndRefusesTheWrongOne() throws {
        let location = try TestServer.location()
        let vault = try Vault.create(postgres: location, passphrase: SecretBytes("first"), kdf: TestServer.cheapKDF)
        try vault.set("secret", service: "s", account: "a")
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(postgres: location, passphrase: SecretBytes("wrong")) }
        try vault.changePassphrase(to: SecretBytes("second"), kdf: TestServer.cheapKDF)
        #expect(throws: VaultError.wrongPassphrase) { try Vault.open(postgres: location, passphrase: SecretBytes("first")) }
        let reopened = try Vault.open(postgres: location, passphrase: SecretBytes("second"))
        #expect(try reopened.string(service: "s", account: "a") == "secret")
        #expect(try reopened.verify() == 1)
    }

    @Test func vaultsInOneDatabaseAreApart() throws {
        let (one, two) = (try TestServer.location(), try TestServer.location())
        let key = VaultKey.random()
        let first = try Vault.create(postgres: one, key: key)
        let second = try Vault.create(postgres: two, key: key)
        try first.set("one", service: "s", account: "a")
        try second.set("two", service: "s", account: "a")
        _ = try second.deleteAll(service: "s")
        #expect(try first.string(service: "s", account: "a") == "one")
        #expect(try first.verify() == 1)
        #expect(try second.verify() == 0)
    }

    @Test func aMissingOrTakenVaultNameIsATypedError() throws {
        let location = try TestServer.location()
        #expect(throws: VaultError.vaultNotFound(path: location.description)) { try Vault.open(postgres: location, key: VaultKey.random()) }
        _ = try Vault.create(postgres: location, key: VaultKey.random())
        #expect(throws: VaultError.vaultAlreadyExists(path: location.description)) { try Vault.create(postgres: location, key: VaultKey.random()) }
        #expect(throws: VaultError.self) { try PostgresVaultLocation(TestServer.url(), vaultName: "no spaces") }
    }

    /// A password given in the connection string is in no description, dump or error,
    /// whether the server refuses it or cannot be reached.
    @Test func theConnectionPasswordNeverLeaks() throws {
        let sentinel = "pw-\(UUID().uuidString)"
        let url = try TestServer.url()
        let wrongPassword = try PostgresVaultLocation(url + (url.contains("?") ? "&" : "?") + "password=\(sentinel)", vaultName: "leak")
        let unreachable = try PostgresVaultLocation("host=127.0.0.1 port=1 user=u dbname=d password=\(sentinel) connect_timeout=5", vaultName: "leak")
        for (location, expectedErrno) in [(wrongPassword, EACCES), (unreachable, ECONNREFUSED)] {
            var dumped = ""
            dump(location, to: &dumped)
            #expect(!"\(location) \(String(reflecting: location)) \(dumped)".contains(sentinel))
            do {
                _ = try Vault.open(postgres: location, key: VaultKey.random())
                Issue.record("opened with a wrong password or no server")
            } catch {
                guard error.code == .io, let path = error.path else { Issue.record("unexpected \(error)"); continue }
                #expect(path == location.description)
                #expect(error.errno == expectedErrno)
                #expect(!"\(error) \(String(reflecting: error)) \(error.localizedDescription)".contains(sentinel))
            }
        }
        #expect(throws: VaultError.invalidArgument(.notAConnectionString)) {
            try PostgresVaultLocation("host='\(sentinel)", vaultName: "leak")
        }
    }

    /// Writers on many connections serialise on the header row: of racing `add`s of one
    /// item exactly one wins, every `set` lands, and the manifest matches the rows.
    @Test func concurrentWritersOnManyConnectionsSerialise() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: location, key: key)
        let (writers, items) = (4, 10)
        let wins = Counter()
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            do {
                let vault = try Vault.open(postgres: location, key: key)
                for item in 0..<items {
                    try vault.set("w\(writer)-\(item)", service: "own", account: "w\(writer)-\(item)")
                    do {
                        try vault.add("w\(writer)", service: "shared", account: "item\(item)")
                        wins.add()
                    } catch VaultError.duplicateItem {}
                }
            } catch {
                Issue.record("writer \(writer): \(error)")
            }
        }
        #expect(wins.value == items)
        let vault = try Vault.open(postgres: location, key: key)
        #expect(try vault.verify() == writers * items + items)
        #expect(try vault.items(service: "own").count == writers * items)
    }

    /// Durability does not rest on the server's or role's default: the session turns
    /// `synchronous_commit` on even when the connection string turned it off.
    @Test func everySessionCommitsSynchronously() throws {
        let url = try TestServer.url()
        let location = try PostgresVaultLocation(url + (url.contains("?") ? "&" : "?") + "options=-csynchronous_commit%3Doff", vaultName: "durable")
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 1_000)
        #expect(try storage.connection.query("SHOW synchronous_commit") { $0.text(0, 0) } == "on")
    }

    /// A lookup by key reads one row however stale the table's statistics: in a table
    /// analyzed before this vault existed, a plan made for the vault's name would expect
    /// it to have no rows and may read the item through the by-service index, scanning
    /// every row of the vault. The session plans each statement once, for any value.
    @Test func aLookupByKeyUsesThePrimaryKeyInAVaultNewerThanTheStatistics() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let administrator = try TestServer.attacker()
        let older = try Vault.create(postgres: try PostgresVaultLocation(location.conninfo, vaultName: "older"), key: VaultKey.random())
        try older.batch { batch in for index in 0..<3_000 { try batch.set("v", service: "s\(index % 3)", account: "\(index)") } }
        try administrator.execute("ANALYZE \(schema).vaultkit_items")
        let vault = try Vault.create(postgres: location, key: VaultKey.random())
        try vault.batch { batch in for index in 0..<1_000 { try batch.set("v", service: "s\(index % 3)", account: "\(index)") } }
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 1_000)
        #expect(try storage.connection.query("SHOW plan_cache_mode") { $0.text(0, 0) } == "force_generic_plan")
        let lookupID = try administrator.query("SELECT lookup_id FROM \(schema).vaultkit_items WHERE vault = 'v' LIMIT 1") { $0.array(0, 0) }
        // The engine's read of an item, prepared and planned as the session plans it.
        try storage.connection.execute("""
            PREPARE item_read(text, bytea) AS SELECT i.service_tag, i.nonce, i.sealed, s.snapshot
            FROM (SELECT pg_current_snapshot()::text AS snapshot) s
            LEFT JOIN vaultkit_items i ON i.vault = $1 AND i.lookup_id = $2
            """)
        let hex = lookupID.map { String(format: "%02x", $0) }.joined()
        let plan = try storage.connection.query("EXPLAIN EXECUTE item_read('v', '\\x\(hex)')") { rows in
            (0..<rows.count).map { rows.text($0, 0) }.joined(separator: "\n")
        }
        #expect(plan.contains("vaultkit_items_pkey"), "\(plan)")
    }

    /// A trigger on the vault's tables could change what a statement does: such a schema
    /// is refused on open. (In a schema of its own, so other tests' vaults are not touched.)
    @Test func aTriggerOnTheVaultsTablesIsRefused() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let attacker = try TestServer.attacker()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        try attacker.execute("""
            CREATE FUNCTION \(schema).noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
            CREATE TRIGGER noop BEFORE UPDATE ON \(schema).vaultkit_items FOR EACH ROW EXECUTE FUNCTION \(schema).noop()
            """)
        #expect(throws: VaultError.tampered(reason: .schemaChanged)) { try Vault.open(postgres: location, key: key) }
        try attacker.execute("DROP TRIGGER noop ON \(schema).vaultkit_items")
        #expect(try Vault.open(postgres: location, key: key).string(service: "s", account: "a") == "x")
    }

    /// A writer holding the lock longer than another's busy timeout makes that one fail
    /// with `busy`, not wait forever or write past the lock.
    @Test func aWriterWaitingPastItsTimeoutIsBusy() throws {
        let location = try TestServer.location()
        let key = VaultKey.random()
        let holder = try Vault.create(postgres: location, key: key)
        let waiter = try Vault.open(postgres: location, key: key, busyTimeout: .milliseconds(200))
        try holder.batch { batch in
            try batch.set("held", service: "s", account: "a")
            #expect(throws: VaultError.busy(path: location.description)) { try waiter.set("late", service: "s", account: "b") }
        }
        #expect(try waiter.items().map(\.account) == ["a"])
    }
}

/// A count shared by threads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
