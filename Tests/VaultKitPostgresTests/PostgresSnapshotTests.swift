import Testing
import TestTraits
@testable import VaultKitPostgres

/// Snapshot versions name the set of completed transactions (`PostgresSnapshot`), so a
/// writer's own commit can be told from anyone else's.
@Suite(.offCooperativePool) struct PostgresSnapshotTests {
    private func version(_ text: String, own: UInt64? = nil) throws -> Int64 {
        try #require(PostgresSnapshot(text)).version(ownTransaction: own)
    }

    /// Ids assigned to transactions that have not completed change the text, not the version.
    @Test func idsStillRunningDoNotChangeTheVersion() throws {
        #expect(try version("10:12:10") == version("10:15:10,12,13,14"))
        #expect(try version("10:12:10") == version("10:12:10", own: 12))
    }

    /// Any completion, commit or abort, below or above the old `xmax`, changes it.
    @Test func anyCompletedTransactionChangesTheVersion() throws {
        let before = try version("10:12:10")
        #expect(try version("12:12:") != before)  // 10 completed
        #expect(try version("10:13:10") != before)  // 12 completed
        #expect(try version("10:15:10,12,13") != before)  // 14 completed, 12 and 13 still running
    }

    /// A writer's transaction is above its lock snapshot's `xmax` (one past the newest
    /// completed id); once it commits, a later snapshot shows exactly the lock's set plus it.
    @Test func aWritersCommitIsTheLockSnapshotPlusItsOwnId() throws {
        let lock = try #require(PostgresSnapshot("20:20:"))
        #expect(lock.version(completing: 20) == (try version("21:21:")))
        #expect(lock.version(completing: 20) != lock.version())
        // 20 and 21 were given ids before this writer's 22 and still run.
        #expect(lock.version(completing: 22) == (try version("20:23:20,21")))
        // Anything else completing as well is another version.
        #expect(lock.version(completing: 20) != (try version("22:22:")))
        #expect(lock.version(completing: 22) != (try version("21:23:21")))
    }

    /// A writer's durability barrier is a transaction of its own after its commit: the
    /// next snapshot shows the lock's set plus both, and is still told from anyone else's.
    @Test func aWritersCommitAndItsBarrierAreTheLockSnapshotPlusBothIds() throws {
        let lock = try #require(PostgresSnapshot("20:20:"))
        #expect(lock.version(completing: [20, 21]) == (try version("22:22:")))
        #expect(lock.version(completing: [21, 20]) == (try version("22:22:")))
        // 21 went to another session between the commit (20) and the barrier (22).
        #expect(lock.version(completing: [20, 22]) == (try version("21:23:21")))
        #expect(lock.version(completing: [20, 22]) != (try version("23:23:")))
        #expect(lock.version(completing: [20]) == lock.version(completing: 20))
    }

    @Test func textThatIsNotASnapshotIsRefused() {
        for text in ["", "1:2", "a:b:", "5:3:", "1:5:7", "1:5:x"] {
            #expect(PostgresSnapshot(text) == nil, "\(text)")
        }
    }
}
