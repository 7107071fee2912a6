import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
@testable import VaultKitPostgres

/// Several processes on one PostgreSQL vault under mixed load, some killed with SIGKILL at
/// random moments and restarted, as hosts crash and come back: what every process was told
/// (acknowledged writes, values read) must fit what the vault holds afterwards.
///
/// `VAULTKIT_PG_LOAD_ROUNDS` (default 3) and `VAULTKIT_PG_LOAD_OPERATIONS` (per worker and
/// round, default 40) make it bigger; `VAULTKIT_PG_LOAD_SEED` replays a failed run.
@Suite(.offCooperativePool, .enabled(if: PostgresTestServer.suitesRun, "needs a PostgreSQL server")) struct PostgresLoadCorrectnessTests {
    static func setting(_ name: String, default value: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) } ?? value
    }

    /// Four workers per round, mixed set/add/update/delete/get over shared and private
    /// accounts; the odd ones send their gets to the hot standby when the server has one
    /// (scripts/test.sh starts it), so its answers are checked under the same load and
    /// kills. Each round kills one or more of them after a random number of logged
    /// lines (often inside a write). Afterwards ``LoadHistory`` finds no contradiction (no
    /// acknowledged write lost, no value read or left that was never written there), no
    /// worker failed with any error (a false `tampered` or `rolledBack` fails it), and
    /// `verify()` passes over every item.
    @Test func killedAndRestartedWorkersLoseNoAcknowledgedWriteAndReadNoWrongSecret() throws {
        let shared = try PostgresProcessTests.Shared()
        let rounds = Int(Self.setting("VAULTKIT_PG_LOAD_ROUNDS", default: 3))
        let operations = Int(Self.setting("VAULTKIT_PG_LOAD_OPERATIONS", default: 40))
        let seed = Self.setting("VAULTKIT_PG_LOAD_SEED", default: UInt64.random(in: 0...UInt64.max))
        let workers = 4
        var random = SplitMix64(seed: seed)
        var history = LoadHistory()
        let observer = try TestServer.attacker()
        for round in 0..<rounds {
            let children = try (0..<workers).map { worker in
                try shared.writer(["load-ops", "\(worker)", "\(round)", "\(random.next())", "\(operations)"],
                                  readingFromStandby: worker % 2 == 1 ? PostgresTestServer.standbyURL : nil)
            }
            // Worker `round % workers` is always killed, each other one half the time, after
            // 1...operations lines (each operation logs one or two).
            let killAfter: [Int?] = (0..<workers).map { worker in
                worker == round % workers || random.next() % 2 == 0 ? 1 + Int(random.next() % UInt64(operations)) : nil
            }
            for (child, lines) in zip(children, killAfter) {
                guard let lines else { continue }
                child.waitForLines(lines, timeout: .seconds(120))
                child.send(SIGKILL)
            }
            for (worker, child) in children.enumerated() {
                let result = child.wait(timeout: .seconds(300))
                let killed = killAfter[worker] != nil && result.signal == SIGKILL
                #expect(result.status == 0 || killed, "seed \(seed) round \(round) worker \(worker) failed: \(result.stderr)")
            }
            // A killed worker's transaction ends (commit or rollback) only when its server
            // session does: the round is over once none is left.
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while try shared.sessions(observer) > 0, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
            try #require(try shared.sessions(observer) == 0, "seed \(seed): the killed workers' sessions outlived them")
            let roundEnd = LoadOperation.now()
            for (worker, child) in children.enumerated() {
                history.replay(worker: "round \(round) worker \(worker)", child.wait().stdout, roundEnd: roundEnd)
            }
        }

        let vault = try Vault.open(postgres: shared.location, key: shared.key)
        var stored: [String: [String: String]] = [:]
        for service in ["shared", "private"] {
            for item in try vault.items(service: service) {
                stored[service, default: [:]][item.account] = try vault.string(service: service, account: item.account)
            }
        }
        history.checkFinal(stored, privateAccounts: (0..<workers).flatMap { LoadOperation.privateAccounts(worker: $0) })
        #expect(history.contradictions == [], "seed \(seed)")
        #expect(history.acknowledged > 0)
        #expect(try vault.items().count == stored.values.map(\.count).reduce(0, +))
        #expect(try vault.verify() == stored.values.map(\.count).reduce(0, +))
    }
}
