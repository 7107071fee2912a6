import Foundation
import StorageConformance
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Reads from a hot standby (`PostgresVaultLocation.readingFromStandby`), against a real
/// streaming replica of the test server: a standby answers only the state this handle
/// verified on the primary, within the staleness bound, and whatever else it shows (a
/// lag, older rows, other rows, no answer) sends the read to the primary, never a wrong
/// secret, a false `tampered` or a false `rolledBack`.
///
/// Serialized: pausing the standby's replay, as these tests do to make it lag, pauses it
/// for every test.
@Suite(.offCooperativePool, .serialized, .enabled(if: PostgresTestServer.standbySuitesRun, "needs a PostgreSQL server with a standby"))
struct PostgresStandbyTests {
    static func standbyURL() throws -> String {
        guard let url = PostgresTestServer.standbyURL else {
            throw ConformanceFailure("""
                VAULTKIT_TEST_POSTGRES_STANDBY_URL is not set: start the test server with \
                VAULTKIT_TEST_POSTGRES_STANDBY=1 (scripts/test.sh does).
                """)
        }
        return url
    }

    /// The standby's superuser, who may pause and resume its replay.
    static func standbyAdmin() throws -> PostgresConnection {
        try PostgresConnection(conninfo: standbyURL().replacingOccurrences(of: "vaultkit@", with: "postgres@"), password: nil, lockTimeoutMilliseconds: 10_000)
    }

    /// A new vault on the primary, opened through `location` (by default with the
    /// standby), on a storage the test can count on (as `TestServer.countedVault()`).
    static func vault(maxStaleness: Duration = .seconds(60)) throws -> (vault: Vault, storage: PostgresVaultStorage, primary: PostgresVaultLocation, key: VaultKey) {
        let primary = try TestServer.location()
        let key = VaultKey.random()
        _ = try Vault.create(postgres: primary, key: key)
        let (vault, storage) = try TestServer.counted(primary.readingFromStandby(standbyURL(), maxStaleness: maxStaleness), key: key)
        return (vault, storage, primary, key)
    }

    /// Returns once the standby has replayed every commit the primary made so far.
    static func awaitReplay() throws {
        let lsn = try TestServer.attacker().query("SELECT pg_current_wal_lsn()::text", []) { $0.text(0, 0) }
        let standby = try standbyAdmin()
        for _ in 0..<1_000 {
            if try standby.query("SELECT (pg_last_wal_replay_lsn() >= $1::pg_lsn)::text", [.text(lsn)], { $0.text(0, 0) == "true" }) { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw ConformanceFailure("the standby did not replay \(lsn) within 10 s")
    }

    /// Runs `body` with the standby's replay paused: it shows the state of the moment of
    /// the pause, however far the primary moves on (a standby that lags, or that someone
    /// holds at an older state).
    static func withReplayPaused<T>(_ body: () throws -> T) throws -> T {
        let standby = try standbyAdmin()
        try standby.execute("SELECT pg_wal_replay_pause()")
        defer { try? standby.execute("SELECT pg_wal_replay_resume()") }
        for _ in 0..<1_000 where try standby.query("SELECT pg_get_wal_replay_pause_state()", [], { $0.text(0, 0) }) != "paused" {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return try body()
    }

    /// A verified item is read from the standby: no statement on the primary, the same value.
    @Test func aVerifiedGetIsAnsweredByTheStandby() throws {
        let (vault, storage, _, _) = try Self.vault()
        try vault.set("alice's", service: "s", account: "alice")
        try vault.set("bob's", service: "s", account: "bob")
        try Self.awaitReplay()
        // The primary shows the state first (its lone read starts the bound).
        #expect(try vault.string(service: "s", account: "alice") == "alice's")
        let primaryBefore = storage.connection.roundTrips
        let answeredBefore = try #require(storage.standby).answered
        for _ in 0..<3 {
            #expect(try vault.string(service: "s", account: "alice") == "alice's")
            #expect(try vault.string(service: "s", account: "bob") == "bob's")
        }
        #expect(storage.connection.roundTrips == primaryBefore)
        #expect(try #require(storage.standby).answered - answeredBefore == 6)
        // An item that is not there: the standby says so too, when the bucket was read whole.
        #expect(throws: VaultError.itemNotFound) { try vault.string(service: "s", account: "nobody") }
    }

    /// The handle's own write is read back at once, while the standby lags behind it; once
    /// the standby has replayed it, it answers again.
    @Test func ownWritesAreReadBackWhileTheStandbyLags() throws {
        let (vault, storage, _, _) = try Self.vault()
        try vault.set("v1", service: "s", account: "a")
        try Self.awaitReplay()
        #expect(try vault.string(service: "s", account: "a") == "v1")
        let answered = try Self.withReplayPaused { () throws -> Int in
            try vault.set("v2", service: "s", account: "a")
            let answered = try #require(storage.standby).answered
            for _ in 0..<3 { #expect(try vault.string(service: "s", account: "a") == "v2") }
            #expect(try #require(storage.standby).answered == answered)
            return answered
        }
        try Self.awaitReplay()
        #expect(try vault.string(service: "s", account: "a") == "v2")
        #expect(try #require(storage.standby).answered == answered + 1)
    }

    /// Another host's write: within the bound the standby may still answer the state this
    /// handle verified (the staleness the caller chose); past it, the read goes to the
    /// primary, and from then on the older state is never returned again, however long
    /// the standby lags.
    @Test func anotherHostsWriteIsReadOnceTheBoundHasPassed() throws {
        let maxStaleness = Duration.milliseconds(300)
        let (reader, storage, primary, key) = try Self.vault(maxStaleness: maxStaleness)
        try reader.set("v1", service: "s", account: "a")
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v1")
        try Self.withReplayPaused {
            try Vault.open(postgres: primary, key: key).set("v2", service: "s", account: "a")
            Thread.sleep(forTimeInterval: (maxStaleness + .milliseconds(100)).seconds)
            let answered = try #require(storage.standby).answered
            for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "v2") }
            #expect(try #require(storage.standby).answered == answered)
        }
    }

    /// The staleness the bound allows, shown: within it, with the standby paused before
    /// another host's write, the reader returns the state it verified; once the standby
    /// has replayed the write (it now shows a state the reader does not hold), the primary
    /// answers.
    @Test func withinTheBoundTheStandbyAnswersTheVerifiedState() throws {
        let (reader, storage, primary, key) = try Self.vault(maxStaleness: .seconds(600))
        try reader.set("v1", service: "s", account: "a")
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v1")
        try Self.withReplayPaused {
            try Vault.open(postgres: primary, key: key).set("v2", service: "s", account: "a")
            let answered = try #require(storage.standby).answered
            #expect(try reader.string(service: "s", account: "a") == "v1")
            #expect(try #require(storage.standby).answered == answered + 1)
        }
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v2")
    }

    /// The rollback guard never sees a standby's state: readers whose guard recorded the
    /// newer states another host wrote (the same guard directory) read while the standby
    /// lags far behind them, and none says `rolledBack`. Within the bound the held reader
    /// may still get the state it verified from the standby; once it verifies the newer
    /// one (here `verify()`, on the primary), the lagging standby answers nothing more.
    @Test func aLaggingStandbyRaisesNoRollbackAlarm() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vaultkit-tests/standby-guard-\(UUID().uuidString.prefix(8))").path
        let rollbackGuard = RollbackGuard(directory: directory + "/rollback")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (reader, storage, primary, key) = try Self.vault(maxStaleness: .seconds(600))
        try reader.useRollbackGuard(rollbackGuard)
        try reader.set("v1", service: "s", account: "a")
        try reader.set("other", service: "s", account: "b")
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v1")
        try Self.withReplayPaused {
            let writer = try Vault.open(postgres: primary, key: key)
            try writer.useRollbackGuard(rollbackGuard)
            for value in ["v2", "v3", "v4"] { try writer.set(value, service: "s", account: "a") }
            // The record is now three commits ahead of what the standby shows.
            #expect(try reader.string(service: "s", account: "a") == "v1")
            #expect(try reader.verify() == 2)
            let answered = try #require(storage.standby).answered
            for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "v4") }
            #expect(try reader.string(service: "s", account: "b") == "other")
            #expect(try #require(storage.standby).answered == answered)
            // A fresh open with the standby, checked against the same record.
            let (fresh, freshStorage) = try TestServer.counted(primary.readingFromStandby(Self.standbyURL(), maxStaleness: .seconds(600)), key: key)
            try fresh.useRollbackGuard(rollbackGuard)
            for _ in 0..<3 { #expect(try fresh.string(service: "s", account: "a") == "v4") }
            #expect(try #require(freshStorage.standby).answered == 0)
        }
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v4")
    }

    /// An attacker who controls what the "standby" shows serves the vault's tables as
    /// they were, with an older secret put back: the header's and the row's versions are
    /// not the ones verified, so the primary answers. (Here the standby is a schema on the
    /// primary holding copies of the rows; a copy is a new row version, as a restore is.)
    @Test func aStandbyServingOtherRowsIsNotBelieved() throws {
        let (location, schema) = try TestServer.locationInNewSchema()
        let key = VaultKey.random()
        let vault = try Vault.create(postgres: location, key: key)
        try vault.set("old secret", service: "s", account: "a")
        let attacker = try TestServer.attacker()
        try attacker.execute("CREATE SCHEMA \(schema)_copy")
        try attacker.execute("CREATE TABLE \(schema)_copy.old_items AS SELECT * FROM \(schema).vaultkit_items")
        try vault.set("new secret", service: "s", account: "a")
        for table in ["vaultkit_header", "vaultkit_items", "vaultkit_host_wraps"] {
            try attacker.execute("CREATE TABLE \(schema)_copy.\(table) AS SELECT * FROM \(schema).\(table)")
        }
        try attacker.execute("UPDATE \(schema)_copy.vaultkit_items i SET nonce = o.nonce, sealed = o.sealed FROM \(schema)_copy.old_items o WHERE o.lookup_id = i.lookup_id")
        let url = try TestServer.url()
        let fake = url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)_copy"
        let (reader, storage) = try TestServer.counted(location.readingFromStandby(fake, maxStaleness: .seconds(600)), key: key)
        for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "new secret") }
        #expect(try #require(storage.standby).answered == 0)
    }

    /// A standby that cannot be reached, or answers with errors, costs the read nothing
    /// but the attempt: the primary answers, and the standby is tried again only after the
    /// retry delay.
    @Test(arguments: ["host=127.0.0.1 port=1 dbname=vaultkit connect_timeout=2", "missing tables"])
    func aStandbyThatFailsNeverFailsARead(_ standby: String) throws {
        let primary = try TestServer.location()
        let key = VaultKey.random()
        try Vault.create(postgres: primary, key: key).set("secret", service: "s", account: "a")
        let url = try TestServer.url()
        // A server without the tables: every statement on it fails.
        let conninfo = standby == "missing tables" ? url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3Dno_such_schema" : standby
        let (reader, storage) = try TestServer.counted(primary.readingFromStandby(conninfo, maxStaleness: .seconds(600)), key: key)
        for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "secret") }
        let standbyState = try #require(storage.standby)
        #expect(standbyState.answered == 0)
        #expect(standbyState.connection == nil)
        #expect(try #require(standbyState.retryAt) > .now)
        #expect(standbyState.statistics.snapshot.failures == 1)
        #expect(standbyState.statistics.snapshot.lastFailure != nil)
    }

    /// A standby that takes the connection and never answers (a hung server, or a host
    /// whose kernel still accepts): its connection string sets no timeout, so the
    /// standby's own (2 s) ends the attempt, and the primary answers. Without it the read
    /// would wait for ever (the time limit fails the test).
    @Test(.timeLimit(.minutes(1))) func aStandbyThatNeverAnswersHoldsAReadOnlyForItsConnectTimeout() throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let primary = try TestServer.location()
        let key = VaultKey.random()
        try Vault.create(postgres: primary, key: key).set("secret", service: "s", account: "a")
        let standby = "host=127.0.0.1 port=\(listener.port) dbname=vaultkit sslmode=disable"
        let (reader, storage) = try TestServer.counted(primary.readingFromStandby(standby, maxStaleness: .seconds(600)), key: key)
        for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "secret") }
        let standbyState = try #require(storage.standby)
        #expect(standbyState.answered == 0 && standbyState.connection == nil)
        #expect(try #require(standbyState.retryAt) > .now)
    }

    /// What the standby did is counted where the caller can see it: the `get`s it
    /// answered, the one the primary answered first (before it had shown the state), and
    /// the one after the handle's own write that the lagging standby could not answer.
    @Test func whatTheStandbyDidIsCounted() throws {
        let primary = try TestServer.location()
        let key = VaultKey.random()
        try Vault.create(postgres: primary, key: key).set("v1", service: "s", account: "a")
        try Self.awaitReplay()
        let statistics = PostgresStandbyStatistics()
        let reader = try Vault.open(postgres: primary.readingFromStandby(Self.standbyURL(), maxStaleness: .seconds(600), statistics: statistics), key: key)
        // Every bucket verified, so each `get` is a lone read, which a standby may answer.
        #expect(try reader.verify() == 1)
        for _ in 0..<4 { #expect(try reader.string(service: "s", account: "a") == "v1") }
        var expected = PostgresStandbyStatistics.Snapshot()
        (expected.pastBound, expected.answered) = (1, 3)
        #expect(statistics.snapshot == expected)
        try Self.withReplayPaused {
            try reader.set("v2", service: "s", account: "a")
            #expect(try reader.string(service: "s", account: "a") == "v2")
        }
        expected.notCaughtUp = 1
        #expect(statistics.snapshot == expected)
        #expect("\(statistics)" == "answered 3, not caught up 1, past the bound 1, unavailable 0, failures 0")
    }

    /// A standby whose server refuses the password in its connection string: every read
    /// goes to the primary, and the statistics say why (without the password), where a
    /// log would otherwise stay silent.
    @Test func aFailingStandbyIsCountedWithItsReason() throws {
        let primary = try TestServer.location()
        let key = VaultKey.random()
        try Vault.create(postgres: primary, key: key).set("secret", service: "s", account: "a")
        let url = try TestServer.url()
        #expect(url.contains("vaultkit@"))
        let wrong = url.replacingOccurrences(of: "vaultkit@", with: "vaultkit:wrong-hunter2@")
        let statistics = PostgresStandbyStatistics()
        let reader = try Vault.open(postgres: primary.readingFromStandby(wrong, maxStaleness: .seconds(600), statistics: statistics), key: key)
        #expect(try reader.verify() == 1)
        for _ in 0..<3 { #expect(try reader.string(service: "s", account: "a") == "secret") }
        let seen = statistics.snapshot
        // The first read: the primary had not shown the state yet; the second tried the
        // standby and failed; the third came within the retry delay.
        #expect((seen.pastBound, seen.failures, seen.unavailable, seen.answered) == (1, 1, 2, 0))
        let reason = try #require(seen.lastFailure)
        #expect(reason.contains("password authentication failed"))
        #expect(!reason.contains("hunter2") && !"\(statistics)".contains("hunter2"))
    }

    /// A standby named in the vault's URL (`?vaultkit_standby_host=...`), as the `vault`
    /// tool, its agent and `Vault.open(url:)` take it: within the bound, with the standby
    /// paused before another handle's write, the reader returns the state it verified,
    /// which only the standby still shows; once the standby has replayed, the new one.
    @Test func aStandbyNamedInTheURLAnswersReads() throws {
        VaultEngines.register(.postgres)
        let primaryURL = try TestServer.url()
        let standby = try PostgresVaultLocation.options(Self.standbyURL())
        let host = try #require(standby["host"]), port = try #require(standby["port"])
        let fragment = "#url-standby-" + UUID().uuidString.lowercased()
        let key = VaultKey.random()
        let writer = try Vault.create(url: primaryURL + fragment, key: key)
        try writer.set("v1", service: "s", account: "a")
        try Self.awaitReplay()
        let query = "vaultkit_standby_host=\(host)&vaultkit_standby_port=\(port)&vaultkit_standby_max_staleness_ms=600000"
        let reader = try Vault.open(url: primaryURL + (primaryURL.contains("?") ? "&" : "?") + query + fragment, key: key)
        #expect(try reader.verify() == 1)
        #expect(try reader.string(service: "s", account: "a") == "v1")
        try Self.withReplayPaused {
            try writer.set("v2", service: "s", account: "a")
            #expect(try reader.string(service: "s", account: "a") == "v1")
        }
        try Self.awaitReplay()
        #expect(try reader.string(service: "s", account: "a") == "v2")
    }

    @Test func theBoundMustBePositiveAndTheStringParse() throws {
        let location = try TestServer.location()
        #expect(throws: VaultError.invalidArgument(.standbyStalenessNotPositive)) { try location.readingFromStandby(Self.standbyURL(), maxStaleness: .zero) }
        #expect(throws: VaultError.invalidArgument(.notAConnectionString)) { try location.readingFromStandby("host='unterminated password=hunter2", maxStaleness: .seconds(1)) }
        #expect(!location.holdsPassword)
        let withStandby = try location.readingFromStandby("postgresql://u:hunter2@127.0.0.1:5433/db", maxStaleness: .seconds(1))
        #expect(withStandby.holdsPassword)
        let standby = try #require(withStandby.standby)
        #expect(standby.description == "postgres://u@127.0.0.1:5433/db")
        var dumped = ""
        dump(withStandby, to: &dumped)
        dump(standby, to: &dumped)
        for shown in ["\(standby)", String(reflecting: standby), "\(withStandby)", dumped] { #expect(!shown.contains("hunter2")) }
    }
}

/// A TCP port on 127.0.0.1 that takes connections (the kernel completes them into its
/// backlog) and never says a word.
private struct SilentListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard descriptor >= 0, bound else { throw ConformanceFailure("no listening socket: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}

private extension Duration {
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
