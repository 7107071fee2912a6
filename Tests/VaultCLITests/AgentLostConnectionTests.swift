import Foundation
import Testing
import TestSupport
import TestTraits
import VaultKit
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

/// A client whose agent goes away mid-request says what that means for its data: a write
/// sent whole may or may not have been carried out, a read changed nothing.
@Suite(.offCooperativePool) struct AgentLostConnectionTests {
    /// An agent, in this process, that holds every vault and answers `contains` (what
    /// `vault set` asks first), then hangs up on the next request without answering: as
    /// an agent killed while it writes.
    final class HangingUpAgent: Sendable {
        let socketPath: String
        private let listener: Int32

        init(directory: String) throws {
            socketPath = directory + "/agent.sock"
            listener = try AgentSocket.listen(at: socketPath)
            let listener = listener
            Thread.detachNewThread {
                while true {
                    let connection = SystemIO.retryingInterrupted { accept(listener, nil, nil) }
                    if connection < 0 { return }
                    Self.serve(connection)
                }
            }
        }

        private static func serve(_ connection: Int32) {
            defer { close(connection) }
            while let frame = try? AgentSocket.receive(on: connection, limit: 1 << 20),
                  let request = try? frame.withUnsafeBytes({ try AgentRequest.decode($0) }) {
                switch request {
                case .holds: try? AgentSocket.send(AgentResponse.ok.encode(), on: connection)
                case .contains: try? AgentSocket.send(AgentResponse.bool(false).encode(), on: connection)
                default: return
                }
            }
        }

        func stop() {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            unlink(socketPath)
        }
    }

    @Test func aWriteCutOffBeforeItsAnswerMayOrMayNotHaveLanded() throws {
        let cli = CLI()
        try cli.initVault()
        let agent = try HangingUpAgent(directory: cli.directory)
        defer { agent.stop() }
        let environment = ["VAULT_AGENT_SOCKET": agent.socketPath]
        let set = try cli.run(["set", "s", "a"], stdin: Data("new\n".utf8), env: environment, unset: ["VAULT_PASSPHRASE"])
        #expect(set.status == 1)
        #expect(set.stderr == "vault: lost the connection to the agent: the agent closed the connection; the change may or may not have been written (run 'vault get' or 'vault list' to check)\n")
        let delete = try cli.run(["delete", "s", "a"], env: environment, unset: ["VAULT_PASSPHRASE"])
        #expect(delete.stderr.contains("may or may not have been written"), "\(delete.stderr)")
        // A read cut off changed nothing, and says only what happened.
        let get = try cli.run(["get", "s", "a"], env: environment, unset: ["VAULT_PASSPHRASE"])
        #expect(get.stderr == "vault: lost the connection to the agent: the agent closed the connection\n")
    }
}
