import VaultAgent
import VaultKit

/// Where the vault a command works on lives: a file, or a vault at a URL of a storage
/// engine registered in ``StorageEngines`` (docs/CLI.md, "Where the vault is").
enum VaultLocation {
    case file(String)
    /// `url`: the URL as given (the agent opens the vault from it, TLS options and all).
    case engine(any VaultEngineLocation, url: String)

    /// `given` read as a URL of a registered engine, else as a file path; a location in
    /// another form an engine's client takes is refused (``VaultEngine/Texts/isOtherForm(_:)``).
    ///
    /// A URL holding a secret (a password) is refused, from the command line or the
    /// environment: argv is readable by every user of the machine, and children inherit
    /// the environment. The engine's client reads the password from its own files.
    static func parse(_ given: String, from source: String) throws(CLIError) -> VaultLocation {
        let location: (any VaultEngineLocation)?
        do {
            location = try VaultEngines.location(given)
        } catch {
            // The error never repeats the URL, which may hold a password.
            if error.reason == .invalidVaultName {
                throw .usage("\(source): the vault name after '#' must be 1 to 63 of A-Z a-z 0-9 . _ -")
            }
            throw .usage("\(source): \(error.reasonText)")
        }
        guard let location else {
            if let texts = VaultEngines.all.map(\.texts).first(where: { $0.isOtherForm(given) }) {
                // Never repeated: it may hold a password.
                throw .usage("\(source) holds \(texts.otherFormName), which vault does not take; give a \(texts.example) URL, with the password in \(HelpText.list(texts.passwordSources))")
            }
            return .file(given)
        }
        if location.holdsSecret {
            let texts = VaultEngines.engine(for: given)?.texts
            throw .usage("\(source): the vault URL must not hold a password; put it where the database client reads it" + (texts.map { " (for \($0.name): \(HelpText.list($0.passwordSources)))" } ?? ""))
        }
        return .engine(location, url: given)
    }

    /// The file path, or `nil` for a vault at an engine's URL.
    var filePath: String? {
        if case .file(let path) = self { path } else { nil }
    }

    /// What prompts and messages name: the path, or the URL without any password.
    var displayName: String {
        switch self {
        case .file(let path): path
        case .engine(let location, _): location.description
        }
    }

    /// How the agent knows this vault (docs/AGENT.md): a file by its device and inode,
    /// `nil` when there is no such file; a vault at a URL by that URL.
    var agentTarget: VaultTarget? {
        switch self {
        case .file(let path):
            FileIdentity.of(path).map { VaultTarget(device: $0.device, inode: $0.inode, path: path) }
        case .engine(let location, _):
            .databaseVault(location.description)
        }
    }

    /// The file path, or a usage error saying `command` needs a vault file.
    func requireFile(for command: String, because reason: String) throws(CLIError) -> String {
        guard let path = filePath else { throw .usage("vault \(command) needs a vault file, not a vault at a URL: \(reason)") }
        return path
    }
}
