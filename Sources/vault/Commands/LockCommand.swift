import ArgumentParser
import VaultAgent
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
            switch try options.location() {
            case .file(let given): path = Paths.absolute(given)
            case .engine(let location, _): path = location.description
            }
        }
        guard let connection = try AgentConnection(socketPath: AgentSocket.path()) else { return }
        _ = try connection.expectOK(.lock(path: path))
    }
}
