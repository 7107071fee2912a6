#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The credential helpers (`git-credential-vault`, `docker-credential-vault`) are tiny
/// programs that replace themselves with `vault SUBCOMMAND ARGUMENTS...`.
///
/// Why exec rather than a shared library: the `vault` tool already owns everything a
/// helper needs (finding the vault, the unlock order, core-dump hardening, secret-safe
/// I/O), so the helpers cannot drift from it, and tools that insist on a program named
/// `git-credential-*` or `docker-credential-*` still find one. The `vault` next to the
/// helper is used first (same build, same install), else the first `vault` on `PATH`.
public enum VaultHelperLauncher {
    public static func exec(subcommand: String) -> Never {
        let arguments = [subcommand] + CommandLine.arguments.dropFirst()
        if let sibling = siblingVault() { execute(sibling, arguments, searchPath: false) }
        execute("vault", arguments, searchPath: true)
        let program = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? "helper"
        let message = "\(program): cannot run 'vault': \(String(cString: strerror(errno))); install it next to \(program) or on PATH\n"
        _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        exit(1)
    }

    /// `vault` in the directory of this executable, if there is one there.
    private static func siblingVault() -> String? {
        var directory: String?
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        if length > 0 {
            let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        }
        #endif
        if directory == nil, let first = CommandLine.arguments.first, first.contains("/") {
            directory = first.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        }
        guard let directory else { return nil }
        let candidate = directory + "/vault"
        return access(candidate, X_OK) == 0 ? candidate : nil
    }

    /// Returns only if the exec failed.
    private static func execute(_ program: String, _ arguments: [String], searchPath: Bool) {
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        if searchPath { execvp(program, argv) } else { execv(program, argv) }
    }
}
