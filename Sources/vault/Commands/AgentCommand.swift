import ArgumentParser
import VaultAgent
import VaultTransfer
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Start, stop or query the agent that keeps vaults unlocked.",
        discussion: """
            The agent is one background process per user that holds the vaults unlocked \
            with 'vault unlock' and performs item commands for them, so that they skip \
            the key derivation. 'vault unlock' starts it when needed; 'vault lock' wipes \
            a vault's keys at once. See docs/AGENT.md.

            SOCKET: $VAULT_AGENT_SOCKET, else $XDG_RUNTIME_DIR/vault/agent.sock, else \
            /tmp/vault-UID/agent.sock.
            """,
        subcommands: [Start.self, Stop.self, Status.self, Serve.self]
    )

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start the agent in the background, unless it is running.")

        func run() throws {
            try AgentLauncher.ensureRunning(socketPath: AgentSocket.path())
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lock every vault and stop the agent (nothing to do when none runs).")

        func run() throws {
            guard let connection = try AgentConnection(socketPath: AgentSocket.path()) else { return }
            _ = try connection.expectOK(.stop)
            // Returns once the agent has exited: its end of the connection closes last.
            connection.waitForClose()
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show whether the agent runs and which vaults it holds unlocked.",
            discussion: "Exits with status 3 when no agent is running."
        )

        func run() throws {
            let socket = AgentSocket.path()
            guard let connection = try AgentConnection(socketPath: socket) else {
                Output.write("agent: not running (\(Escaping.terminalSafe(socket)))\n", to: STDOUT_FILENO)
                exitProcess(3)
            }
            guard case .status(let pid, let vaults) = try connection.expectOK(.status) else {
                throw AgentError.brokenConnection(reason: "an answer that does not fit the request")
            }
            var text = "agent: running (pid \(pid), \(Escaping.terminalSafe(socket)))\n"
            if vaults.isEmpty { text += "no vault unlocked\n" }
            for vault in vaults {
                let timeout = vault.idleTimeoutSeconds == 0
                    ? "no idle timeout"
                    : "locks after \(vault.idleTimeoutSeconds) s idle, \(vault.secondsUntilLocked) s left"
                text += "unlocked: \(Escaping.terminalSafe(vault.path)) (\(timeout))\n"
            }
            Output.write(text, to: STDOUT_FILENO)
        }
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the agent in the foreground (for a service manager); logs go to standard error."
        )

        func run() throws {
            umask(0o077)
            let socket = Paths.absolute(AgentSocket.path())
            // Like other daemons: the agent keeps no directory busy (vault paths are absolute).
            chdir("/")
            try AgentServer(socketPath: socket, ownsSocketDirectory: AgentSocket.directoryIsOurs, hooks: .tool).run()
        }
    }
}
