import Foundation
import StorageConformance
import TestSupport
import VaultKit
@testable import VaultKitPostgres
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of one test's own (`scripts/postgres-test-cluster.sh`), which the
/// test may crash: the shared test server serves every suite at once.
///
/// How a crash loses a commit that is not durable: the WAL writer is stopped
/// (`SIGSTOP`), so nothing flushes the WAL in the background; an asynchronous commit then
/// stays in the server's shared WAL buffers until some later flush. Killing the WAL
/// writer (`SIGKILL`) makes the postmaster end every session, drop shared memory and
/// recover from the WAL on disk, as after a crash: what was only in the buffers is gone.
final class CrashableServer {
    let directory: String
    let port: String
    private let passfile: String

    init() throws {
        let script = Self.packageRoot + "/scripts/postgres-test-cluster.sh"
        let result = try ChildProcess("/bin/bash", [script, "start"], environment: ProcessInfo.processInfo.environment).wait(timeout: .seconds(300))
        guard result.status == 0 else { throw ConformanceFailure("the test cluster did not start: \(result.stderr)") }
        var exports: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { exports[String(pair[0])] = String(pair[1]) }
        }
        guard let directory = exports["VAULTKIT_TEST_POSTGRES_DIR"], let passfile = exports["PGPASSFILE"],
              let url = exports["VAULTKIT_TEST_POSTGRES_URL"], let port = url.split(separator: ":").last?.split(separator: "/").first
        else { throw ConformanceFailure("the test cluster printed no location: \(result.stdout)") }
        (self.directory, self.passfile, self.port) = (directory, passfile, String(port))
        // Nothing but the test writes WAL.
        let administrator = try superuser()
        try administrator.execute("ALTER SYSTEM SET autovacuum = off")
        try administrator.execute("SELECT pg_reload_conf()")
    }

    deinit {
        _ = try? ChildProcess("/bin/bash", [Self.packageRoot + "/scripts/postgres-test-cluster.sh", "stop", directory]).wait(timeout: .seconds(60))
    }

    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Vault `name` in this server's database, as the test role.
    func location(_ name: String) throws -> PostgresVaultLocation {
        try PostgresVaultLocation("postgresql://vaultkit@127.0.0.1:\(port)/vaultkit?passfile=\(passfile)", vaultName: name)
    }

    /// A session of the server's superuser.
    func superuser() throws -> PostgresConnection {
        try PostgresConnection(conninfo: "postgresql://postgres@127.0.0.1:\(port)/vaultkit?passfile=\(passfile)", password: nil, lockTimeoutMilliseconds: 10_000)
    }

    /// How many times the server has flushed the WAL to disk (`pg_stat_wal.wal_sync`), once
    /// `sessions` have reported their counts.
    func walSyncs(reportedBy sessions: [PostgresConnection]) throws -> Int64 {
        for session in sessions { try session.execute("SELECT pg_stat_force_next_flush()") }
        let administrator = try superuser()
        return try administrator.query("SELECT wal_sync FROM pg_stat_wal") { $0.int64(0, 0) }
    }

    private func walWriter() throws -> pid_t {
        let administrator = try superuser()
        let pid = try administrator.query("SELECT pid::int8 FROM pg_stat_activity WHERE backend_type = 'walwriter'") { rows in
            rows.count == 1 ? rows.int64(0, 0) : nil
        }
        guard let pid else { throw ConformanceFailure("no WAL writer") }
        return pid_t(pid)
    }

    /// Stops the WAL writer: from now on the WAL is flushed only by a session that waits
    /// for its own commit.
    func stopWALWriter() throws {
        guard kill(try walWriter(), SIGSTOP) == 0 else { throw ConformanceFailure("SIGSTOP: errno \(errno)") }
    }

    /// Crashes the server (see the type's comment) and waits until it accepts sessions again.
    func crash() throws {
        guard kill(try walWriter(), SIGKILL) == 0 else { throw ConformanceFailure("SIGKILL: errno \(errno)") }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            usleep(100_000)
            if let session = try? superuser(), (try? session.query("SELECT pg_is_in_recovery()::text") { $0.text(0, 0) }) == "false" { return }
        }
        throw ConformanceFailure("the server did not come back after the crash")
    }
}
