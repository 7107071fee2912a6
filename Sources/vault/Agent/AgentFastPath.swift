import Foundation
import VaultKit

/// `vault get SERVICE ACCOUNT` and `vault set SERVICE ACCOUNT`, each optionally with
/// `--vault PATH`, for a vault the agent holds, without argument-parser.
///
/// Why: through the agent, a `get` is process start-up and one request; building
/// argument-parser's command tree was about a third of that (see Benchmarks/README.md,
/// "The agent"). Everything else (help, other options, other commands, a vault the
/// agent does not hold) goes through the parser as always, and so does anything this
/// does not recognise exactly; the output, errors and exit statuses are those of
/// `GetCommand` and `WriteArguments` (`AgentTests` runs both paths).
enum AgentFastPath {
    /// Runs the command and returns its exit status, or `nil` (having read and written
    /// nothing) when it is not one of the two forms or the agent does not hold the vault.
    static func run(_ arguments: [String]) -> Int32? {
        guard let (command, service, account, vaultArguments) = recognise(arguments) else { return nil }
        guard let path = try? VaultOptions.path(given: vaultArguments.last) else { return nil }
        guard let vault = AgentVault.ifHeld(path: path, openHere: { try VaultOptions.parse(vaultArguments).openVault() }) else { return nil }
        defer { vault.close() }
        do {
            if command == "get" {
                let output = SensitiveBuffer()
                try vault.secret(service: service, account: account).append(to: output)
                output.append(UInt8(ascii: "\n"))
                try Output.writeStandardOutput(output)
            } else {
                _ = try vault.contains(service: service, account: account)
                let secret = try SecretInput.read(service: service, account: account)
                try vault.set(secret, service: service, account: account, label: nil, generic: nil)
            }
        } catch VaultError.itemNotFound {
            fail(CLIError.itemNotFound(service: service, account: account))
        } catch VaultError.duplicateItem {
            fail(CLIError.itemExists(service: service, account: account))
        } catch {
            fail(error)
        }
        return ExitStatus.success
    }

    /// `get|set SERVICE ACCOUNT` with at most `--vault PATH` (or `--vault=PATH`) anywhere
    /// after the command; anything else, including an argument that looks like an option,
    /// an empty one, or `help`, is left to the parser.
    private static func recognise(_ arguments: [String]) -> (String, String, String, [String])? {
        guard let command = arguments.first, command == "get" || command == "set" else { return nil }
        var positionals: [String] = [], vaultArguments: [String] = []
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            if argument == "--vault", vaultArguments.isEmpty, let value = rest.popFirst(), !value.isEmpty, !value.hasPrefix("-") {
                vaultArguments = [argument, value]
            } else if argument.hasPrefix("--vault="), vaultArguments.isEmpty, argument.count > "--vault=".count {
                vaultArguments = ["--vault", String(argument.dropFirst("--vault=".count))]
            } else if argument.isEmpty || argument.hasPrefix("-") || argument == "help" {
                return nil
            } else {
                positionals.append(argument)
            }
        }
        guard positionals.count == 2 else { return nil }
        return (command, positionals[0], positionals[1], vaultArguments)
    }

    private static func fail(_ error: any Error) -> Never {
        let (message, status) = Failure.describe(error)
        Failure.terminate(message: message, status: status)
    }
}
