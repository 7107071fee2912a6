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

extension VaultCommand {
    /// Replaces argument-parser's `main` to give the documented exit statuses (2 for
    /// usage rather than 64) and one-line error messages, and to harden the process
    /// before anything else happens.
    static func main() {
        StorageEngines.register()
        Hardening.ensureStandardDescriptors()
        Hardening.reportFileSizeLimitAsError()
        do {
            try Hardening.disableCoreDumps()
        } catch {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        }
        do {
            try refuseArgumentsThatAreNotUTF8()
        } catch {
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        }
        if let status = FastPath.run(Array(CommandLine.arguments.dropFirst())) { exitProcess(status) }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForParser(error)
        }
        do {
            try command.run()
        } catch {
            // Help requested by running `vault` alone, or a ValidationError from run().
            let isParserError = !(error is CLIError || error is VaultError)
                && [ExitCode.success, .validationFailure].contains(exitCode(for: error))
            if isParserError { exitForParser(error) }
            let (message, status) = Failure.describe(error)
            Failure.terminate(message: message, status: status)
        }
    }

    /// Swift decodes `argv` into `String`s by replacing invalid UTF-8 with U+FFFD, so two
    /// Latin-1 names that differ in one accented letter would name the same item: the
    /// raw bytes are checked first, and such an argument is a usage error.
    private static func refuseArgumentsThatAreNotUTF8() throws(CLIError) {
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            guard UTF8Validation.isValid(bytes) else { throw .notUTF8Name(what: "argument \(index)") }
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
        let lines = full.split(separator: "\n").map { $0.trimmingWhitespace() }
        if let hint = lines.last(where: { $0.hasPrefix("See '") }) {
            text += " (" + hint.replacing(" for more information.", with: "").replacing("See '", with: "see '") + ")"
        }
        Failure.terminate(message: text, status: ExitStatus.usage)
    }
}
