@testable import VaultKitPostgres
import Testing
import TestSupport
import TestTraits

/// A write transaction whose `COMMIT` is the statement that fills the connection's queue:
/// the queue is sent as it fills, so the commit is answered before the durability barrier
/// is. The barrier must then go alone and the commit be reported as the success it is
/// (it was reported as a lost connection, about one vault creation in fifteen in
/// `Benchmarks/postgres-load.sh`, whose batches queue about 5,000 statements).
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server"))
struct PostgresQueueLimitTests {
    @Test func aCommitThatFillsTheQueueIsReportedAsCommitted() throws {
        let connection = try TestServer.attacker()
        #expect(connection.hasDurabilityBarrier)
        let table = "queue_limit_\(UInt32.random(in: 0...UInt32.max))"
        try connection.execute("CREATE TABLE \(table) (n int NOT NULL)")
        defer { try? connection.execute("DROP TABLE \(table)") }
        // Every count of queued statements around the limit, so one of them puts the
        // `COMMIT` last in a full queue, whatever the limit is.
        for count in 200...300 {
            try connection.execute("BEGIN")
            for n in 0..<count { try connection.enqueue("INSERT INTO \(table) (n) VALUES ($1)", [.int64(Int64(n))]) }
            try connection.enqueueAsynchronousCommit()
            try connection.enqueue("COMMIT")
            #expect(try connection.flushCommitting() != nil, "no barrier answered after \(count) statements")
            let stored: Int64 = try connection.query("SELECT count(*) FROM \(table)") { rows in rows.int64(0, 0) }
            #expect(stored == Int64(count), "after \(count) statements")
            try connection.execute("TRUNCATE \(table)")
        }
    }
}
