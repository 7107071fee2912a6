import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Many tasks, many processes, and processes killed mid-write, on one vault file.
@Suite(.offCooperativePool) struct ConcurrencyTests {
    /// `VAULTKIT_STRESS=1` runs the long variants; CI runs the bounded ones on every change.
    static let stress = ProcessInfo.processInfo.environment["VAULTKIT_STRESS"] == "1"

    @Test func manyTasksShareOneVault() async throws {
        let (vault, _) = try Fixtures.passphraseVault()
        let tasks = 8, writes = Self.stress ? 500 : 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<writes {
                        try vault.set("v\(task)-\(index)", service: "t\(task)", account: "a\(index)")
                        #expect(try vault.string(service: "t\(task)", account: "a\(index)") == "v\(task)-\(index)")
                        _ = try vault.items(service: "t\((task + 1) % tasks)")
                    }
                }
            }
            try await group.waitForAll()
        }
        await #expect(try vault.items().count == tasks * writes)
    }

    @Test func severalProcessesWriteOneVaultWithoutLosingAnUpdate() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        vault.close()
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let processes = 4, writes = Self.stress ? 1_000 : 60
        let children = try (0..<processes).map { index in
            try ChildProcess(TestPaths.executable("vault-test-writer"), ["write", path, keyFile, "p\(index)", "\(writes)"])
        }
        // Meanwhile this process writes too, through its own connection.
        let local = try Vault.open(at: path, key: key)
        for index in 0..<writes { try local.set("v-local-\(index)", service: "svc", account: "local-\(index)") }
        for child in children {
            let result = child.wait(timeout: .seconds(300))
            #expect(result.status == 0, "writer failed: \(result.stderr)")
            #expect(!result.stderr.contains("locked"))
        }
        let items = try local.items(service: "svc")
        #expect(items.count == (processes + 1) * writes)
        #expect(try local.verify() == (processes + 1) * writes + 1)
        for index in 0..<processes {
            #expect(try local.string(service: "svc", account: "p\(index)-\(writes - 1)") == "v-p\(index)-\(writes - 1)")
        }
        // The item every process overwrote holds one of their final values.
        #expect(try local.string(service: "shared", account: "last").hasPrefix("last-p"))
    }

    @Test func aWriterKilledMidStreamLosesNoAcknowledgedWrite() throws {
        let trials = Self.stress ? 50 : 5
        for trial in 0..<trials {
            let (vault, path, key) = try Fixtures.keyVault("killed\(trial)")
            vault.close()
            let keyFile = Fixtures.writeKeyFile(key, besides: path)
            let child = try ChildProcess(TestPaths.executable("vault-test-writer"), ["write", path, keyFile, "k", "100000"])
            let target = 20 + trial * 37
            #expect(child.waitForOutput(containing: "ack \(target)\n"))
            child.send(SIGKILL)
            let result = child.wait()
            #expect(result.signal == SIGKILL)
            let acknowledged = result.stdout.split(separator: "\n").compactMap { Int($0.dropFirst(4)) }.max() ?? -1
            #expect(acknowledged >= target)

            let reopened = try Vault.open(at: path, key: key)
            #expect(try reopened.verify() >= acknowledged + 1)
            for index in 0...acknowledged {
                #expect(try reopened.string(service: "svc", account: "k-\(index)") == "v-k-\(index)")
            }
            // At most the one write in flight may have landed past the last acknowledgement.
            let stored = try reopened.items(service: "svc").count
            #expect(stored == acknowledged + 1 || stored == acknowledged + 2)
        }
    }

    @Test func aWriterWaitsForAnotherProcesssLock() throws {
        let (vault, path, key) = try Fixtures.keyVault()
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let holder = try ChildProcess(TestPaths.executable("vault-test-writer"), ["hold-lock", path, keyFile, "1.0"])
        #expect(holder.waitForOutput(containing: "locked"))
        try vault.set("after the lock", service: "s", account: "waiter")
        #expect(holder.wait().status == 0)
        #expect(try vault.string(service: "lock", account: "holder") == "held")
        #expect(try vault.string(service: "s", account: "waiter") == "after the lock")
    }

    @Test func aLockHeldPastTheBusyTimeoutIsATypedErrorAndLosesNothing() throws {
        let (setup, path, key) = try Fixtures.keyVault()
        try setup.set("before", service: "s", account: "a")
        setup.close()
        let keyFile = Fixtures.writeKeyFile(key, besides: path)
        let holder = try ChildProcess(TestPaths.executable("vault-test-writer"), ["hold-lock", path, keyFile, "3"])
        #expect(holder.waitForOutput(containing: "locked"))
        let impatient = try Vault.open(at: path, key: key, busyTimeout: .milliseconds(200))
        #expect(throws: VaultError.busy(path: path)) { try impatient.set("during", service: "s", account: "a") }
        #expect(try impatient.string(service: "s", account: "a") == "before")
        #expect(holder.wait().status == 0)
        try impatient.set("after", service: "s", account: "a")
        #expect(try impatient.string(service: "s", account: "a") == "after")
    }
}
