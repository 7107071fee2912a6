import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import VaultKit

/// `vault set` processes in loops while `vault passwd` (to the same passphrase, which
/// re-keys under a new salt) and `vault rekey` run again and again: a writer that lost
/// the race to a key change re-derives its key and writes, so no write fails, and every
/// acknowledged write is in the vault afterwards, where a writer that gave up would fail
/// with "re-keyed by another process".
@Suite(.offCooperativePool) struct RekeyRaceTests {
    static let stress = ProcessInfo.processInfo.environment["VAULTKIT_STRESS"] == "1"

    @Test func writersDoNotFailWhilePasswdAndRekeyRun() throws {
        let cli = CLI()
        try cli.initVault()
        // Rows enough that each re-key holds the write lock while writers queue behind it.
        let seeded = try Vault.open(at: cli.vaultPath, passphrase: "correct horse")
        try seeded.batch { batch in
            for index in 0..<200 { try batch.set(String(repeating: "s", count: 1_000), service: "seed", account: "\(index)") }
        }
        seeded.close()

        let writers = Self.stress ? 16 : 4
        let setsPerWriter = Self.stress ? 300 : 15
        let changes = Self.stress ? 40 : 4
        let log = RaceLog()
        let group = DispatchGroup()

        for writer in 0..<writers {
            // A thread each: blocking waits for child processes stay off the cooperative pool.
            DispatchQueue(label: "writer \(writer)").async(group: group) {
                for step in 0..<setsPerWriter {
                    let account = "w\(writer)-\(step % 5)", value = "v\(writer)-\(step)"
                    do {
                        let result = try cli.run(["set", "race", account], stdin: Data((value + "\n").utf8))
                        if result.status == 0 {
                            log.acknowledged.withLock { $0.append((account, value)) }
                        } else {
                            log.failures.withLock { $0.append("set \(account): status \(result.status): \(result.stderr)") }
                        }
                    } catch {
                        log.failures.withLock { $0.append("set \(account): \(error)") }
                    }
                }
                log.writersDone.add(1, ordering: .releasing)
            }
        }
        DispatchQueue(label: "key changes").async(group: group) {
            // At least `changes` rounds, and on until the writers are done.
            var round = 0
            while round < changes || log.writersDone.load(ordering: .acquiring) < writers {
                do {
                    let passwd = try cli.run(["passwd"], env: ["VAULT_NEW_PASSPHRASE": "correct horse"])
                    let rekey = try cli.run("rekey")
                    for (name, result) in [("passwd", passwd), ("rekey", rekey)] where result.status != 0 {
                        log.failures.withLock { $0.append("\(name): status \(result.status): \(result.stderr)") }
                    }
                } catch {
                    log.failures.withLock { $0.append("key change: \(error)") }
                }
                round += 1
                // A person runs `vault passwd` now and then, not back to back: without a
                // pause, on a loaded machine every Argon2id a writer spends following one
                // change could be overtaken by the next, and it gives up after 16 (by
                // design). Wait for one more acknowledged write before the next change.
                let acknowledged = log.acknowledged.withLock { $0.count }
                while log.acknowledged.withLock({ $0.count }) == acknowledged && log.writersDone.load(ordering: .acquiring) < writers {
                    usleep(5_000)
                }
            }
        }
        group.wait()

        let failed = log.failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed.count) failed: \(failed.prefix(5))")
        // The last acknowledged value of each account (each writer writes its own in order).
        var expected: [String: String] = [:]
        for (account, value) in log.acknowledged.withLock({ $0 }) { expected[account] = value }
        #expect(expected.count == writers * min(5, setsPerWriter))
        let vault = try Vault.open(at: cli.vaultPath, passphrase: "correct horse")
        defer { vault.close() }
        #expect(try vault.verify() == 200 + expected.count)
        for (account, value) in expected {
            #expect(try vault.string(service: "race", account: account) == value, "\(account)")
        }
    }
}

/// What the threads of a race report, shared between them.
private final class RaceLog: Sendable {
    let failures = Mutex<[String]>([])
    /// (account, value) of each acknowledged `vault set`, in each writer's order.
    let acknowledged = Mutex<[(String, String)]>([])
    let writersDone = Atomic<Int>(0)
}
