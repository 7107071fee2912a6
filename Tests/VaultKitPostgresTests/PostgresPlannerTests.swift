import Foundation
import Testing
import TestTraits
import TestSupport
import VaultKit
@testable import VaultKitPostgres

/// The planner's estimate for `service_tag` (``PostgresSQL/serviceTagsPlannedAsDistinct``):
/// VaultKit's sessions plan each statement once, generically, so a vault whose items are
/// mostly of one service must not make the statements that look up one tag (an item's
/// versions, "has it none yet") scan every item row.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresPlannerTests {
    /// The generic plan of a statement looking up one service tag, as VaultKit's sessions make it.
    static func genericPlan(_ schema: String) throws -> String {
        let administrator = try TestServer.attacker()
        try administrator.execute("ANALYZE \(schema).vaultkit_items")
        try administrator.execute("SET plan_cache_mode = force_generic_plan")
        try administrator.execute("PREPARE of_tag(text, bytea) AS SELECT lookup_id FROM \(schema).vaultkit_items WHERE vault = $1 AND service_tag = $2")
        return try administrator.query("EXPLAIN EXECUTE of_tag('v', '\\x00')") { rows in
            (0..<rows.count).map { rows.text($0, 0) }.joined(separator: "\n")
        }
    }

    static func option(_ schema: String) throws -> String {
        try TestServer.attacker().query("""
            SELECT coalesce(array_to_string(attoptions, ','), '') FROM pg_attribute
            WHERE attrelid = '\(schema).vaultkit_items'::regclass AND attname = 'service_tag'
            """) { $0.text(0, 0) }
    }

    /// 3,000 items of one service, analyzed: one tag's rows are found by the index (a
    /// sequential scan of every row took 1.4-2 ms per history `set` at 10,000 items).
    @Test func oneTagIsFoundByTheIndexInAVaultOfOneService() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let vault = try Vault.create(postgres: location, key: .random())
        try vault.batch { batch in
            for index in 0..<3_000 { try batch.set("v\(index)", service: "s", account: "a\(index)") }
        }
        #expect(try Self.option(schema) == "n_distinct=-1")
        let plan = try Self.genericPlan(schema)
        #expect(plan.contains("vaultkit_items_by_service") && !plan.contains("Seq Scan"), "\(plan)")
        try vault.set("v0'", service: "s", account: "a0")
        let versions = try vault.history(service: "s", account: "a0")
        #expect(versions.count == 2)
    }

    /// A database whose tables an earlier release created gets the estimate when a host
    /// of this release opens a vault in it as the tables' owner.
    @Test func anOwnerOpeningAVaultSetsTheEstimate() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        try TestServer.attacker().execute("ALTER TABLE \(schema).vaultkit_items ALTER COLUMN service_tag RESET (n_distinct)")
        #expect(try Self.option(schema) == "")
        #expect(try Vault.open(postgres: location, key: key).string(service: "s", account: "a") == "x")
        #expect(try Self.option(schema) == "n_distinct=-1")
    }

    /// A table whose lock the estimate needs is busy (a `VACUUM`, here another session's
    /// `LOCK`): the opening waits for it only briefly, not for the session's lock timeout
    /// (two minutes here), opens without it, and a later opening sets it. The bound below
    /// is a liveness check, 150 times the wait, not a measurement.
    @Test func aBusyTableDelaysNoOpening() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        try Vault.create(postgres: location, key: key).set("x", service: "s", account: "a")
        let administrator = try TestServer.attacker()
        try administrator.execute("ALTER TABLE \(schema).vaultkit_items ALTER COLUMN service_tag RESET (n_distinct)")
        try administrator.execute("BEGIN; LOCK TABLE \(schema).vaultkit_items IN SHARE UPDATE EXCLUSIVE MODE")
        let started = ContinuousClock.now
        let storage = try PostgresVaultStorage(location, lockTimeoutMilliseconds: 120_000)
        #expect(try Vault.open(storage, key: key).string(service: "s", account: "a") == "x")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(try Self.option(schema) == "")
        try administrator.execute("COMMIT")
        #expect(try Vault.open(postgres: location, key: key).string(service: "s", account: "a") == "x")
        #expect(try Self.option(schema) == "n_distinct=-1")
    }
}
