import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Make the agent forget a vault (or all with --all), wiping its keys at once.",
        discussion: """
            Nothing to do (status 0) when no agent runs or it does not hold the vault; \
            later commands ask for the passphrase again.

            EXAMPLE:
              vault lock --all
            """
    )

    @OptionGroup var options: VaultOptions

    @Flag(help: "Lock every vault the agent holds.")
    var all = false

    func run() throws {
        var path: String?
        if !all {
            // The agent never holds a PostgreSQL vault: nothing to lock, as for any vault it does not hold.
            guard let given = try options.location().filePath else { return }
            path = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
        }
        guard let connection = try AgentConnection(socketPath: AgentSocket.path()) else { return }
        _ = try connection.expectOK(.lock(path: path))
    }
}
