#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultAgent
import VaultKit
import VaultTransfer

extension AgentServerHooks {
    /// The `vault` tool's agent: its log on standard error (``AgentLog``), one line on
    /// standard output once it listens (``AgentLauncher`` waits for it), only processes of
    /// this user served, and every vault it unlocks checked against the rollback records
    /// as any command's vault is (its own commits recorded too).
    static var tool: AgentServerHooks {
        AgentServerHooks(
            log: { AgentLog.write($0) },
            listening: { socketPath, pid in
                Output.write("vault agent: listening on \(Escaping.terminalSafe(socketPath)) (pid \(pid))\n", to: STDOUT_FILENO)
            },
            admits: { _, uid in uid == geteuid() },
            checkOpened: { (vault) throws(VaultError) in try VaultOptions.rollbackGuard(vault, accepting: false) }
        )
    }
}
