import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Processes killed with SIGKILL in the middle of the operations that rewrite the key
/// material, or that keep history: the vault must open afterwards, with every item intact.
@Suite(.offCooperativePool) struct CrashInjectionTests {
    static let trials = ProcessInfo.processInfo.environment["VAULTKIT_STRESS"] == "1" ? 100 : 6

    /// A vault with some items, closed, plus its key file.
    static func prepared(_ label: String) throws -> (path: String, key: VaultKey, keyFile: String) {
        let (vault, path, key) = try Fixtures.keyVault(label)
        try vault.batch { batch in
            for index in 0..<40 { try batch.set("v\(index)", service: "s\(index % 4)", account: "a\(index)", label: "l\(index)") }
        }
        vault.close()
        return (path, key, Fixtures.writeKeyFile(key, besides: path))
    }

    static func expectAllItems(in vault: Vault) throws {
        // The manifest committed with the rows: nothing half-applied on either side.
        #expect(try vault.verify() == 40)
        let items = try vault.items()
        #expect(items.count == 40)
        for index in 0..<40 {
            #expect(try vault.string(service: "s\(index % 4)", account: "a\(index)") == "v\(index)")
        }
    }

    /// Starts `mode`, waits for a varying number of acknowledgements, kills it, returns the last one.
    static func killMidway(_ mode: String, _ path: String, _ keyFile: String, trial: Int) throws -> Int {
        let child = try ChildProcess(TestPaths.executable("vault-test-writer"), [mode, path, keyFile])
        let target = trial % 3 == 0 ? 0 : Int.random(in: 1...15)
        #expect(child.waitForOutput(containing: "ack \(target)\n"))
        // A random extra moment, so the kill lands at different points inside the next operation.
        usleep(UInt32.random(in: 0...3_000))
        child.send(SIGKILL)
        let result = child.wait()
        #expect(result.signal == SIGKILL, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { Int($0.dropFirst(4)) }.max() ?? -1
    }

    @Test func killedDuringPassphraseChanges() throws {
        for trial in 0..<Self.trials {
            let (path, _, keyFile) = try Self.prepared("passwd\(trial)")
            let acknowledged = try Self.killMidway("passwd-loop", path, keyFile, trial: trial)
            // The last acknowledged passphrase opens it, unless the change in flight committed.
            let opened = (try? Vault.open(at: path, passphrase: "pass-\(acknowledged)"))
                ?? (try? Vault.open(at: path, passphrase: "pass-\(acknowledged + 1)"))
            #expect(opened != nil, "trial \(trial): neither pass-\(acknowledged) nor its successor opens the vault")
            if let opened { try Self.expectAllItems(in: opened) }
        }
    }

    @Test func killedDuringRekeys() throws {
        for trial in 0..<Self.trials {
            let (path, key, keyFile) = try Self.prepared("rekey\(trial)")
            _ = try Self.killMidway("rekey-loop", path, keyFile, trial: trial)
            try Self.expectAllItems(in: try Vault.open(at: path, key: key))
        }
    }

    /// An overwrite that keeps history killed midway: the vault holds the old value as
    /// the item and its history, or the new value with the old one kept, never neither.
    @Test func killedDuringOverwritesKeepingHistory() throws {
        for trial in 0..<Self.trials {
            let (path, key, keyFile) = try Self.prepared("history\(trial)")
            let acknowledged = try Self.killMidway("history-loop", path, keyFile, trial: trial)
            let vault = try Vault.open(at: path, key: key)
            #expect(try vault.verify() == 41)
            let current = try vault.string(service: "h", account: "a")
            #expect(current == "v-\(acknowledged)" || current == "v-\(acknowledged + 1)", "trial \(trial): \(current)")
            let written = Int(current.dropFirst(2)) ?? -1
            let history = try vault.history(service: "h", account: "a")
            #expect(history.count == min(written + 1, 11), "trial \(trial): the current and up to ten kept versions")
            if written > 0 {
                let previous = try vault.itemWithSecret(service: "h", account: "a", version: history[1].number).secret.string()
                #expect(previous == "v-\(written - 1)", "trial \(trial): the value written over is kept")
            }
        }
    }
}
