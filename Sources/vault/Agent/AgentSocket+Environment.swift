#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultAgent

/// Where this user's agent listens, as the tool's environment says.
extension AgentSocket {
    /// `$VAULT_AGENT_SOCKET`, else `$XDG_RUNTIME_DIR/vault/agent.sock`, else
    /// `/tmp/vault-UID/agent.sock`: one agent per user, as with ssh-agent and rbw.
    static func path() -> String {
        if let path = Environment.value("VAULT_AGENT_SOCKET") { return path }
        if let runtime = Environment.value("XDG_RUNTIME_DIR") { return runtime + "/vault/agent.sock" }
        return "/tmp/vault-\(geteuid())/agent.sock"
    }

    /// Whether the socket's directory is one this tool creates (and so must be 0700).
    static var directoryIsOurs: Bool { Environment.value("VAULT_AGENT_SOCKET") == nil }
}
