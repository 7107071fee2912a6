import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import VaultKit

/// Library processes and `vault` CLI processes doing random writes on one vault at the
/// same time. Each process owns its accounts, so the expected final state is a replay
/// of that process's acknowledged operations in order; no `busy` error may escape.
@Suite(.offCooperativePool) struct MixedStressTests {
    static let stress = ProcessInfo.processInfo.environment["VAULTKIT_STRESS"] == "1"

    /// The state a sequence of acknowledged operations leaves: account -> value.
    static func replay(_ acknowledgements: [String], into state: inout [String: String]) {
        for line in acknowledgements {
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            if parts.count == 4, parts[1] == "set" { state[parts[2]] = parts[3] }
            if parts.count == 3, parts[1] == "delete" { state[parts[2]] = nil }
        }
    }

    @Test func libraryAndCLIProcessesTogetherLoseNothing() async throws {
        let directory = TestPaths.temporaryDirectory()
        let path = directory + "/stress.vault"
        let key = VaultKey.random()
        try await Vault.create(at: path, key: key).close()
        let keyFile = directory + "/key"
        _ = FileManager.default.createFile(atPath: keyFile, contents: key.withUnsafeBytes { Data($0) }, attributes: [.posixPermissions: 0o600])

        let libraryProcesses = 3, cliProcesses = 2
        let libraryOps = Self.stress ? 2_000 : 150, cliOps = Self.stress ? 200 : 25
        let writers = try (0..<libraryProcesses).map { index in
            try ChildProcess(TestPaths.executable("vault-test-writer"), ["random-ops", path, keyFile, "lib\(index)", "\(index + 1)", "\(libraryOps)"])
        }
        // CLI "processes": each a sequence of `vault` invocations, run concurrently with the writers.
        let cliAcks = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<cliProcesses {
                group.addTask {
                    var random = SystemRandomNumberGenerator()
                    var acks: [String] = []
                    for step in 0..<cliOps {
                        let account = "cli\(index)-\(Int.random(in: 0..<5, using: &random))"
                        let environment = ChildProcess.cleanEnvironment(["VAULT_KEY_FILE": keyFile])
                        if Int.random(in: 0..<4, using: &random) == 0 {
                            let result = try ChildProcess.run(CLI.executable, ["delete", "stress", account, "--vault", path], environment: environment)
                            #expect(result.status == 0 || result.status == 44, "\(result.stderr)")
                            acks.append("ack delete \(account)")
                        } else {
                            let value = "c\(step)-\(Int.random(in: 0..<1000, using: &random))"
                            let result = try ChildProcess.run(CLI.executable, ["set", "stress", account, "--vault", path],
                                                              environment: environment, standardInput: Data((value + "\n").utf8))
                            #expect(result.status == 0, "\(result.stderr)")
                            if result.status == 0 { acks.append("ack set \(account) \(value)") }
                        }
                    }
                    return acks
                }
            }
            var all: [[String]] = []
            for try await acks in group { all.append(acks) }
            return all
        }

        var expected: [String: String] = [:]
        for writer in writers {
            let result = writer.wait(timeout: .seconds(600))
            #expect(result.status == 0, "writer failed: \(result.stderr)")
            let acks = result.stdout.split(separator: "\n").map(String.init)
            #expect(acks.count == libraryOps)
            Self.replay(acks, into: &expected)
        }
        for acks in cliAcks { Self.replay(acks, into: &expected) }

        let vault = try await Vault.open(at: path, key: key)
        // Rows and manifest stayed in step through every process's writes.
        await #expect(try vault.verify() == expected.count)
        var actual: [String: String] = [:]
        for item in try await vault.items(service: "stress") {
            actual[item.account] = try await vault.string(service: "stress", account: item.account)
        }
        #expect(actual == expected)
    }
}
