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

/// Runs `vault run`'s child: secrets only in its environment, its exit status returned,
/// signals passed on.
///
/// The secrets go from ``SecretBytes`` into `NAME=VALUE` strings allocated here, handed to
/// `posix_spawnp`, then zeroed and freed: never into a Swift `String`, never into argv.
/// The child's argv is exactly the command the user typed.
enum ChildRunner {
    /// What a variable of the child is set to.
    enum Value {
        case plain(String)
        case secret(SecretBytes)
    }

    /// Sent on to the child when another process sends them to `vault`. When the terminal
    /// sends them (Ctrl-C, a hang-up), the child, in the same process group, gets its own
    /// copy, so they are not sent twice.
    static let forwardedSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2]

    /// The unlocking secrets of `vault` itself, which the child does not inherit (paths such
    /// as `VAULT_PATH` or `VAULT_KEY_FILE` are not secret and are kept).
    static let withheldVariables: Set<String> = ["VAULT_PASSPHRASE", "VAULT_NEW_PASSPHRASE"]

    /// Runs `command` with the inherited environment plus `variables` and waits for it.
    ///
    /// - Returns: the child's exit status, or 128 + N when signal N ended it.
    static func run(_ command: [String], variables: [(name: String, value: Value)]) throws(CLIError) -> Int32 {
        let environment = try ChildEnvironment(variables: variables, withheld: withheldVariables)
        defer { environment.release() }

        // Handlers, not a thread blocking the signals: any thread of the process may be the
        // one a signal is delivered to (see vault_cli_forward_signals). The child starts
        // with default dispositions (exec resets handled signals) and this thread's mask.
        let installed = forwardedSignals.withUnsafeBufferPointer { vault_cli_forward_signals($0.baseAddress, Int32($0.count)) }
        guard installed == 0 else { throw .cannotRun(command: command[0], errno: errno) }
        var currentMask = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &currentMask)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setsigmask(&attributes, &currentMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawnError = environment.withPointers { posix_spawnp(&pid, command[0], nil, &attributes, argv, $0) }
        guard spawnError == 0 else { throw .cannotRun(command: command[0], errno: spawnError) }
        environment.release()

        let child = pid
        vault_cli_forward_to(child)

        var status: Int32 = 0
        if SystemIO.retryingInterrupted({ waitpid(child, &status, 0) }) < 0 {
            throw .cannotRun(command: command[0], errno: errno)
        }
        // WIFEXITED / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}

/// The child's `environ`: the inherited entries (shared, not copied) minus those being
/// replaced or withheld, plus the new ones, all held in one ``SecretBytes`` that is
/// wiped when released.
private final class ChildEnvironment {
    private var inherited: [UnsafeMutablePointer<CChar>?] = []
    /// `NAME=value\0` entries, back to back.
    private var entries = SecretBytes()
    /// Where each entry starts in `entries`.
    private var starts: [Int] = []

    init(variables: [(name: String, value: ChildRunner.Value)], withheld: Set<String>) throws(CLIError) {
        let replaced = Set(variables.map(\.name)).union(withheld)
        var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        while let pointer = entry?.pointee {
            // Only the name is read into a String: an inherited value may be a secret.
            let nameLength = strchr(pointer, Int32(UInt8(ascii: "="))).map { $0 - pointer } ?? strlen(pointer)
            let name = String(decoding: UnsafeRawBufferPointer(start: pointer, count: nameLength), as: UTF8.self)
            if !replaced.contains(name) { inherited.append(pointer) }
            entry = entry?.advanced(by: 1)
        }
        for (name, value) in variables {
            starts.append(entries.count)
            entries.append(name + "=")
            switch value {
            case .plain(let text):
                entries.append(text)
            case .secret(let secret):
                let hasNUL = secret.withUnsafeBytes { $0.contains(0) }
                if hasNUL { throw CLIError.secretHasNUL(variable: name) }
                entries.append(contentsOf: secret)
            }
            entries.append(UInt8(0))
        }
    }

    /// Calls `body` with the `NULL`-terminated `environ` array; its pointers are valid only
    /// inside `body`.
    func withPointers<Result>(_ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
        entries.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress else { return body(inherited + [nil]) }
            let base = UnsafeMutableRawPointer(mutating: start)
            let own = starts.map { Optional((base + $0).assumingMemoryBound(to: CChar.self)) }
            return body(inherited + own + [nil])
        }
    }

    /// Wipes the entries made here; safe to call twice.
    func release() {
        entries = SecretBytes()
        starts = []
    }
}
