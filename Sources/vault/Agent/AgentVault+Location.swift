import VaultAgent
import VaultKit

extension AgentVault {
    /// The agent's vault at `location`, or `nil` when no agent of this user holds it
    /// (then the command does everything itself, as it always did).
    static func ifHeld(_ location: VaultLocation, openHere: @escaping () throws -> Vault) -> AgentVault? {
        ifHeld(location.agentTarget, socketPath: AgentSocket.path(), writer: VaultOptions.declaredWriter, openHere: openHere)
    }
}
