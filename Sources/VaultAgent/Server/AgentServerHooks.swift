import VaultKit

/// What the agent's server takes from the program that runs it, so that it names nothing
/// of that program: where its log goes, whom it serves, and how a vault it unlocks is
/// checked (the `vault` tool passes its rollback guard, as every command of it checks the
/// vaults it opens).
package struct AgentServerHooks: Sendable {
    /// Writes one line of the agent's log: what happened to which vault and who was
    /// refused, never an item's name, a secret or a message's bytes.
    package var log: @Sendable (_ line: String) -> Void
    /// Called once the agent listens: the process that started it waits for this.
    package var listening: @Sendable (_ socketPath: String, _ pid: Int32) -> Void
    /// Whether the process at the other end of a connection, as the kernel names it, is
    /// the agent's user; a connection it refuses is closed before a byte is read, and logged.
    package var admits: @Sendable (_ pid: Int32, _ uid: UInt32) -> Bool
    /// Checks a vault just unlocked before the agent holds it; an error is the client's.
    package var checkOpened: @Sendable (_ vault: Vault) throws(VaultError) -> Void

    package init(
        log: @escaping @Sendable (_ line: String) -> Void,
        listening: @escaping @Sendable (_ socketPath: String, _ pid: Int32) -> Void,
        admits: @escaping @Sendable (_ pid: Int32, _ uid: UInt32) -> Bool,
        checkOpened: @escaping @Sendable (_ vault: Vault) throws(VaultError) -> Void
    ) {
        self.log = log
        self.listening = listening
        self.admits = admits
        self.checkOpened = checkOpened
    }
}
