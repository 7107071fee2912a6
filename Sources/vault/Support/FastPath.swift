#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultAgent
import VaultKit

/// `vault get SERVICE ACCOUNT` and `vault set SERVICE ACCOUNT`, each optionally with
/// `--vault PATH`, without argument-parser: through the agent when it holds the vault,
/// else on the vault opened here.
///
/// Why: a `get` through the agent is process start-up and one request, and a `get` with
/// a key file little more; setting up argument-parser was about a quarter to a third of
/// that (Benchmarks/README.md, "The agent"). Help, every other option and command, and
/// anything not recognised exactly go through the parser as always. The steps are the
/// commands' own (``VaultOptions/openItems(_:keyFile:hostKeyFile:acceptingRollback:)``,
/// ``GetCommand/writeSecret(of:service:account:)``, ``WriteArguments/write(_:to:service:account:label:generic:)``),
/// so output, errors and exit statuses are theirs (the CLI test suites run both paths).
enum FastPath {
    /// Runs the command and returns its exit status, or `nil` (having read and written
    /// nothing) when it is not one of the two forms.
    static func run(_ arguments: [String]) -> Int32? {
        guard let (command, service, account, vaultPath) = recognise(arguments) else { return nil }
        // A missing or refused location is reported by the parser's path, which finds the same.
        guard let location = try? VaultOptions.location(given: vaultPath) else { return nil }
        do {
            // As `VaultOptions.keyFile` and `hostKeyFile` find them without --key-file or --host-key.
            let vault = try VaultOptions.openItems(location, keyFile: Environment.value("VAULT_KEY_FILE"), hostKeyFile: Environment.value("VAULT_HOST_KEY_FILE"))
            defer { vault.close() }
            try ItemArguments.naming(service: service, account: account) {
                if command == "get" {
                    try GetCommand.writeSecret(of: vault, service: service, account: account)
                } else {
                    try WriteArguments.write(.set, to: vault, service: service, account: account, label: nil, generic: nil)
                }
            }
        } catch {
            fail(error)
        }
        return ExitStatus.success
    }

    /// `get|set SERVICE ACCOUNT` with at most `--vault PATH` (or `--vault=PATH`) anywhere
    /// after the command; anything else, including an argument that looks like an option,
    /// an empty one, or `help`, is left to the parser.
    private static func recognise(_ arguments: [String]) -> (command: String, service: String, account: String, vaultPath: String?)? {
        guard let command = arguments.first, command == "get" || command == "set" else { return nil }
        var positionals: [String] = [], vaultPath: String?
        var rest = arguments.dropFirst()[...]
        while let argument = rest.popFirst() {
            if argument == "--vault", vaultPath == nil, let value = rest.popFirst(), !value.isEmpty, !value.hasPrefix("-") {
                vaultPath = value
            } else if argument.hasPrefix("--vault="), vaultPath == nil, argument.count > "--vault=".count {
                vaultPath = String(argument.dropFirst("--vault=".count))
            } else if argument.isEmpty || argument.hasPrefix("-") || argument == "help" {
                return nil
            } else {
                positionals.append(argument)
            }
        }
        guard positionals.count == 2 else { return nil }
        return (command, positionals[0], positionals[1], vaultPath)
    }

    private static func fail(_ error: any Error) -> Never {
        let (message, status) = Failure.describe(error)
        Failure.terminate(message: message, status: status)
    }
}
