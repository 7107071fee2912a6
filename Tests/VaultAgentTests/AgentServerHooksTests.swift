import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import VaultAgent
import VaultKit

/// The agent's server as a library, in this process: what is the `vault` tool's (its log,
/// the check of a vault it unlocks) comes in through ``AgentServerHooks``, and the server
/// answers requests without the executable.
@Suite(.offCooperativePool) struct AgentServerHooksTests {
    /// What the hooks saw: the log's lines and how many vaults were checked.
    final class Log: Sendable {
        let lines = Mutex<[String]>([])
        let checks = Mutex(0)
        func write(_ line: String) { lines.withLock { $0.append(line) } }
    }

    static func server(_ directory: String, log: Log, check: @escaping @Sendable (Vault) throws(VaultError) -> Void) -> AgentServer {
        let hooks = AgentServerHooks(log: { log.write($0) }, listening: { _, _ in }, admits: { _, _ in true }, checkOpened: check)
        return AgentServer(socketPath: directory + "/agent.sock", ownsSocketDirectory: false, hooks: hooks)
    }

    static func newVault(_ directory: String) throws -> String {
        let path = directory + "/a.vault"
        let vault = try Vault.create(at: path, passphrase: "correct horse", kdf: testKDF)
        try vault.set("s3cret", service: "s", account: "a")
        vault.close()
        return path
    }

    @Test func aVaultTheCheckRefusesIsNotHeldAndTheClientGetsTheError() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = try Self.newVault(directory)
        let log = Log()
        let server = Self.server(directory, log: log) { (vault) throws(VaultError) in
            throw .rolledBack(path: vault.location.description, seenGeneration: 7, fileGeneration: 3)
        }
        let response = server.respond(to: .unlock(path: path, credential: SecretBytes("correct horse"), isKey: false, idleTimeoutSeconds: 0))
        guard case .failure(let error) = response else { Issue.record("not a failure: \(response)"); return }
        #expect(error.code == .rolledBack && error.seenGeneration == 7)
        guard case .status(_, let vaults) = server.respond(to: .status) else { Issue.record("no status"); return }
        #expect(vaults.isEmpty)
        #expect(log.lines.withLock { $0 }.isEmpty)
    }

    @Test func aVaultTheCheckAcceptsIsHeldServedAndLogged() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = try Self.newVault(directory)
        let log = Log()
        let server = Self.server(directory, log: log) { (_) throws(VaultError) in log.checks.withLock { $0 += 1 } }
        guard case .ok = server.respond(to: .unlock(path: path, credential: SecretBytes("correct horse"), isKey: false, idleTimeoutSeconds: 0)) else {
            Issue.record("not unlocked")
            return
        }
        #expect(log.checks.withLock { $0 } == 1)
        let identity = try #require(FileIdentity.of(path))
        let target = VaultTarget(device: identity.device, inode: identity.inode, path: path)
        guard case .secret(let secret) = server.respond(to: .secret(target, service: "s", account: "a")) else {
            Issue.record("no secret")
            return
        }
        #expect(secret.string() == "s3cret")
        guard case .count(1) = server.respond(to: .lock(path: path)) else { Issue.record("not locked"); return }
        let lines = log.lines.withLock { $0 }
        #expect(lines.count == 2 && lines[0] == "unlocked \(path)" && lines[1].hasPrefix("locked \(path): locked on request"), "\(lines)")
    }
}
