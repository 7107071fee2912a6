import ArgumentParser
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
import VaultKit
import VaultTransfer

/// `vault run`: a program gets secrets in its environment, never on a command line.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a command with secrets from the vault in its environment.",
        discussion: """
            --env NAME=SERVICE/ACCOUNT (or NAME=vault://SERVICE/ACCOUNT) sets the child's \
            variable NAME to the item's secret. --env-file FILE reads NAME=VALUE lines: a \
            VALUE of the form vault://SERVICE/ACCOUNT is replaced by that item's secret, any \
            other VALUE is passed as it is ('#' comments, 'export ' and quotes allowed). In \
            names, write / as %2F and % as %25. Later definitions win; --env wins over files.

            Every item is read before the command starts: a missing one is an error (status \
            44) and nothing runs. The command's argv is exactly what follows '--'; the \
            secrets are only in its environment. vault's own VAULT_PASSPHRASE and \
            VAULT_NEW_PASSPHRASE are not passed on.

            EXIT STATUS: the command's own; 128+N if signal N ended it; 127 if it was not \
            found, 126 if it could not be run. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and \
            SIGUSR2 sent to vault are passed to the command (Ctrl-C on a terminal reaches \
            it directly, once).

            EXAMPLES:
              vault run --env GITHUB_TOKEN=api.github.com/alice -- gh repo list
              vault run --env-file .env.vault -- ./server --port 8080
              printf 'DATABASE_URL=vault://db.internal/app\\nLOG_LEVEL=debug\\n' > .env.vault
            """
    )

    @OptionGroup var options: VaultOptions

    @Option(name: .customLong("env"), help: ArgumentHelp("A variable for the command: NAME=SERVICE/ACCOUNT.", valueName: "name=item"))
    var variables: [String] = []

    @Option(name: .customLong("env-file"), help: ArgumentHelp("NAME=VALUE lines; VALUE may be vault://SERVICE/ACCOUNT.", valueName: "file"))
    var environmentFiles: [String] = []

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after '--'.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("give the command to run after '--'") }
        for definition in variables { _ = try Self.parseDefinition(definition) }
    }

    func run() throws {
        // File entries first, then --env: later definitions replace earlier ones.
        var definitions: [(name: String, value: EnvironmentFile.Value)] = []
        for path in environmentFiles {
            definitions += try Self.readEnvironmentFile(path).entries
        }
        for definition in variables {
            let (name, reference) = try Self.parseDefinition(definition)
            definitions.append((name, .reference(reference)))
        }
        // The last definition of a name wins; replaced ones are not even read.
        var seen = Set<String>()
        let unique = definitions.reversed().filter { seen.insert($0.name).inserted }.reversed()
        exitProcess(try ChildRunner.run(command, variables: try resolve(Array(unique))))
    }

    /// Reads every referenced secret, before anything runs; the vault is closed again
    /// before the command starts.
    private func resolve(_ definitions: [(name: String, value: EnvironmentFile.Value)]) throws -> [(name: String, value: ChildRunner.Value)] {
        let needsVault = definitions.contains { if case .reference = $0.value { true } else { false } }
        let vault = needsVault ? try options.openVault() : nil
        defer { vault?.close() }
        return try definitions.map { (name, value) -> (name: String, value: ChildRunner.Value) in
            switch value {
            case .plain(let text):
                return (name, .plain(text))
            case .reference(let reference):
                guard let vault else { preconditionFailure("the vault is open whenever there is a reference") }
                do {
                    return (name, .secret(try vault.secret(service: reference.service, account: reference.account)))
                } catch VaultError.itemNotFound {
                    throw CLIError.itemNotFound(service: reference.service, account: reference.account)
                }
            }
        }
    }

    /// `NAME=SERVICE/ACCOUNT` or `NAME=vault://SERVICE/ACCOUNT`.
    private static func parseDefinition(_ definition: String) throws -> (String, ItemReference) {
        guard let equals = definition.firstIndex(of: "=") else {
            throw ValidationError("--env \(Escaping.quoted(definition)): expected NAME=SERVICE/ACCOUNT")
        }
        let name = String(definition[..<equals])
        guard EnvironmentName.isValid(name) else {
            throw ValidationError("--env \(Escaping.quoted(definition)): \(Escaping.quoted(name)) is not a variable name")
        }
        let target = String(definition[definition.index(after: equals)...])
        do {
            return (name, try ItemReference(target, requireScheme: false))
        } catch {
            throw ValidationError("--env \(name): " + error.message(for: target))
        }
    }

    private static func readEnvironmentFile(_ path: String) throws -> EnvironmentFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.cannotRead(what: "the env file \(path)", errno: errno) }
        defer { close(fd) }
        // It may hold plain values that are secret: read into memory that is zeroed.
        var contents = SecretBytes()
        do throws(CLIError) {
            guard try contents.readAll(from: fd, limit: 1024 * 1024) else { throw CLIError.cannotRead(what: "the env file \(path)", errno: EFBIG) }
        } catch {
            if case .cannotRead(_, let code) = error { throw CLIError.cannotRead(what: "the env file \(path)", errno: code) }
            throw error
        }
        let text = contents.text
        do {
            return try EnvironmentFile(parsing: text)
        } catch {
            throw CLIError.usage("\(path):\(error.line): \(error.reason)")
        }
    }
}
