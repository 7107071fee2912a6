#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import CVaultCLI
import VaultKit
import VaultAgent

/// Starts `vault agent serve` in the background, as ssh-agent and rbw do: in a session
/// of its own (no terminal, untouched by the shell's job control), standard input from
/// /dev/null, its log appended to `agent.log` beside the socket, and no other file of
/// the caller's: a descriptor the shell left open (`vault unlock 7>&1 | cat`) would
/// otherwise stay open for the agent's whole life, keeping a pipe from ever ending and
/// the caller's files reachable from a process that holds the key.
enum AgentLauncher {
    /// Starts the agent unless one is running, and returns once it listens.
    static func ensureRunning(socketPath: String) throws(AgentError) {
        if try AgentConnection(socketPath: socketPath) != nil { return }
        try AgentSocket.prepareDirectory(for: socketPath, ownsDirectory: AgentSocket.directoryIsOurs)
        let logPath = AgentSocket.directory(of: socketPath) + "/agent.log"
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard log >= 0 else { throw .socket(what: "cannot open \(logPath)", errno: errno) }
        defer { close(log) }
        var ready: [Int32] = [0, 0]
        guard pipe(&ready) == 0 else { throw .socket(what: "cannot create a pipe", errno: errno) }
        // Close-on-exec at once (no other thread runs yet): only the agent gets the write end, as its stdout.
        for fd in ready { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { close(ready[0]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, log, STDERR_FILENO)
        closeInheritedDescriptors(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // POSIX_SPAWN_SETSID (glibc 2.26+) is hidden behind _GNU_SOURCE, so its value is spelled out.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK) | 0x80)

        let executable = ownExecutable()
        let words: [String] = [executable, "agent", "serve"]
        let argv = words.map { strdup($0) } + [nil]
        let environment = agentEnvironment().map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            environment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
        close(ready[1])
        guard spawned == 0 else { throw .cannotStart(reason: SystemMessage.text(spawned)) }

        // The agent writes one line once it listens; end of file means it stopped first
        // (perhaps because another agent won the race, which is fine).
        var line = [UInt8]()
        var byte: UInt8 = 0
        while line.last != UInt8(ascii: "\n") {
            let n = SystemIO.retryingInterrupted { SystemIO.read(ready[0], &byte, 1) }
            if n <= 0 { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\n") { return }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        if try AgentConnection(socketPath: socketPath) != nil { return }
        throw .cannotStart(reason: "it stopped at once; see \(logPath)")
    }

    /// Adds the closing of every descriptor from 3 up (after the `dup2`s onto 0 to 2).
    /// Where the C library cannot close a range, each descriptor open now without
    /// close-on-exec is closed by name (no other thread opens files while `vault unlock` starts the agent).
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        guard vault_cli_spawn_close_from(&actions, 3) != 0 else { return }
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let listing = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd > STDERR_FILENO, fd != listing, fcntl(fd, F_GETFD) & FD_CLOEXEC == 0 else { continue }
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }

    /// The environment without `VAULT_*` (but the socket's variable): `vault unlock` may
    /// have read the passphrase from `VAULT_PASSPHRASE`, which must not live on in a
    /// long-running process's environment.
    private static func agentEnvironment() -> [String] {
        var entries: [String] = []
        var next = environ
        while let entry = next.pointee {
            let text = String(cString: entry)
            if !text.hasPrefix("VAULT_") || text.hasPrefix("VAULT_AGENT_SOCKET=") { entries.append(text) }
            next += 1
        }
        return entries
    }

    /// This very binary, so the agent is the same version as its clients.
    private static func ownExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if count > 0 { return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return CommandLine.arguments[0]
    }
}
