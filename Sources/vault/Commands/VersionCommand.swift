import ArgumentParser
import VaultKit

/// `vault version`, the spelling git and docker users reach for; `vault --version`
/// prints the same line (see ``VaultCommand``).
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print the version of vault and VaultKit.",
        discussion: """
            Prints one line, "vault VERSION"; `vault --version` prints the same.
            """
    )

    /// The line both spellings print: the library's release, which the tool ships with.
    static let line = "vault \(VaultKitVersion.current)"

    func run() throws {
        print(Self.line)
    }
}
