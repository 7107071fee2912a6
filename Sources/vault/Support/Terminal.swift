import CVaultCLI
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

/// No-echo prompts on the controlling terminal (`/dev/tty`), never on standard input
/// or output, which may be pipes.
enum Terminal {
    /// Whether standard input is a terminal (then a secret is prompted for, not read).
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Reads one line without echo, or returns `nil` at once when the process has no
    /// controlling terminal (a pipe, CI, cron, a new session): never waits for one.
    ///
    /// Echo is restored before returning, on error, and when SIGINT, SIGTERM, SIGHUP or
    /// SIGQUIT arrive while the prompt waits.
    static func readSecret(prompt: String, noun: String = "secret") throws(CLIError) -> SecretBytes? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Echo goes off before the prompt appears, so nothing typed after it is shown.
        guard vault_cli_echo_off(fd) == 0 else { throw .cannotRead(what: "the terminal", errno: errno) }
        defer {
            vault_cli_echo_restore()
            Output.write("\n", to: fd)
        }
        Output.write(Escaping.terminalSafe(prompt), to: fd)
        var line = SecretBytes()
        var byte: UInt8 = 0
        while true {
            let n = SystemIO.retryingInterrupted { SystemIO.read(fd, &byte, 1) }
            if n < 0 { throw .cannotRead(what: "the terminal", errno: errno) }
            if n == 0 {
                // End of input (Ctrl-D) before any newline: the user gave up.
                guard line.count > 0 else { throw .inputEnded(noun: noun) }
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
            guard line.count <= 64 * 1024 else { throw .secretTooLarge }
        }
        byte = 0
        if line.lastByte == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    /// Asks twice, for a new passphrase or secret, and insists both answers match.
    static func readNewSecret(prompt: String, confirmation: String, noun: String, what: String) throws(CLIError) -> SecretBytes? {
        guard let first = try readSecret(prompt: prompt, noun: noun) else { return nil }
        guard let second = try readSecret(prompt: confirmation, noun: noun) else { return nil }
        guard first == second else { throw .mismatch(what: what) }
        return first
    }

    /// Asks a yes/no question on the controlling terminal, with echo: `true` for an answer
    /// starting with "y" or "Y", `false` for anything else (an empty line, end of input);
    /// `nil` at once when standard input is not a terminal or there is none to ask on.
    static func confirm(_ question: String) throws(CLIError) -> Bool? {
        guard standardInputIsTerminal else { return nil }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        Output.write(Escaping.terminalSafe(question), to: fd)
        var first: UInt8?
        var byte: UInt8 = 0
        while true {
            let n = SystemIO.retryingInterrupted { SystemIO.read(fd, &byte, 1) }
            if n < 0 { throw .cannotRead(what: "the terminal", errno: errno) }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            if first == nil { first = byte }
        }
        return first == UInt8(ascii: "y") || first == UInt8(ascii: "Y")
    }
}
