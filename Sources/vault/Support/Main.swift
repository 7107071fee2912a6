import ArgumentParser
import Foundation
import VaultKit

extension VaultCommand {
    /// Replaces argument-parser's `main` to give the documented exit statuses (2 for
    /// usage rather than 64) and one-line error messages, and to harden the process
    /// before anything else happens.
    static func main() {
        do {
            try Hardening.disableCoreDumps()
        } catch {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForParser(error)
        }
        do {
            try command.run()
        } catch let error as CLIError {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        } catch let error as VaultError {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        } catch {
            // Help requested by running `vault` alone, or a ValidationError from run().
            exitForParser(error)
        }
    }

    /// Help goes to standard output with status 0; any other parser error becomes one
    /// `vault: ` line and status 2.
    private static func exitForParser(_ error: any Error) -> Never {
        if exitCode(for: error) == .success {
            print(fullMessage(for: error))
            exitProcess(ExitStatus.success)
        }
        let full = fullMessage(for: error)
        var text = message(for: error)
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        if let first = text.first { text = first.lowercased() + text.dropFirst() }
        let lines = full.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        if let hint = lines.last(where: { $0.hasPrefix("See '") }) {
            text += " (" + hint.replacingOccurrences(of: " for more information.", with: "").replacingOccurrences(of: "See '", with: "see '") + ")"
        }
        Failure.terminate(message: text, status: ExitStatus.usage)
    }
}
