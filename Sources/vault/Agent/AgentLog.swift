#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultTransfer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's log on its standard error: what happened to which vault and who was
/// refused, never a name, a secret, or a message's bytes.
enum AgentLog {
    static func write(_ message: String) {
        let line = Timestamp.iso8601(Date()) + " vault agent: " + Escaping.terminalSafe(message) + "\n"
        Output.write(line, to: STDERR_FILENO)
    }
}
