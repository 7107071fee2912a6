import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a finished child process left behind.
public struct ProcessResult: Sendable {
    /// The exit status, or `128 + signal` when a signal ended the process (as shells report it).
    public var status: Int32
    /// The signal that ended the process, if one did.
    public var signal: Int32?
    public var standardOutput: Data
    public var standardError: Data

    public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
    public var stderr: String { String(decoding: standardError, as: UTF8.self) }
}

/// A real child process with pipes for its standard streams, started in a new session
/// (`setsid`) so it has no controlling terminal: a program that would prompt on
/// `/dev/tty` fails instead of hanging the test run.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let stdinWriter: FileHandle?
    private let outputReader: PipeReader
    private let errorReader: PipeReader
    private let lock = NSLock()
    private var finished: ProcessResult?
    /// Serialises pipe creation and spawning; see ``CloexecPipe``.
    private static let spawnLock = NSLock()

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; defaults to ``ChildProcess/cleanEnvironment()``.
    ///   - standardInput: bytes written to the child's stdin, which is then closed;
    ///     `nil` keeps stdin open (use ``closeStandardInput()``), `Data()` gives an empty stdin.
    ///   - inherited: descriptors the child gets beyond 0 to 2, as child descriptor → this
    ///     process's descriptor (as a shell's `7>&1` gives one).
    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, standardInput: Data? = Data(), inherited: [Int32: Int32] = [:]) throws {
        // Close-on-exec from birth: tests spawn children in parallel, and a child that
        // inherited another pipe's write end would keep that pipe from ever reaching EOF.
        Self.spawnLock.lock()
        defer { Self.spawnLock.unlock() }
        let stdinPipe = try CloexecPipe(), stdoutPipe = try CloexecPipe(), stderrPipe = try CloexecPipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe.fileHandleForReading.fileDescriptor, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe.fileHandleForWriting.fileDescriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe.fileHandleForWriting.fileDescriptor, 2)
        for (child, parent) in inherited { posix_spawn_file_actions_adddup2(&actions, parent, child) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Children start with signals as a shell would give them: none blocked and none
        // ignored. The test runner's threads block most signals and this process ignores
        // SIGPIPE, and both would otherwise survive exec (a SIGINT or SIGTERM sent to the
        // child would stay pending forever).
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var catchableSignals = sigset_t()
        sigfillset(&catchableSignals)
        sigdelset(&catchableSignals, SIGKILL)
        sigdelset(&catchableSignals, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &catchableSignals)
        #if canImport(Glibc)
        // POSIX_SPAWN_SETSID (glibc 2.26+) is hidden behind _GNU_SOURCE, so its value is spelled out.
        flags |= 0x80
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? Self.cleanEnvironment()).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            env.forEach { free($0) }
        }
        var pid: pid_t = 0
        // ETXTBSY: the executable is a copy a test just wrote, and a child that another
        // test forked at that moment still shares the writing descriptor until its own
        // exec. Nothing ran, so spawning again a moment later is safe.
        var status = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        for _ in 0..<20 where status == ETXTBSY {
            usleep(25_000)
            status = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        }
        try? stdinPipe.fileHandleForReading.close()
        try? stdoutPipe.fileHandleForWriting.close()
        try? stderrPipe.fileHandleForWriting.close()
        guard status == 0 else {
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(executable): \(String(cString: strerror(status)))"])
        }
        self.pid = pid
        outputReader = PipeReader(stdoutPipe.fileHandleForReading)
        errorReader = PipeReader(stderrPipe.fileHandleForReading)
        if let standardInput {
            // A child that exits without reading gives EPIPE, not SIGPIPE: ignored here.
            signal(SIGPIPE, SIG_IGN)
            try? stdinPipe.fileHandleForWriting.write(contentsOf: standardInput)
            try? stdinPipe.fileHandleForWriting.close()
            stdinWriter = nil
        } else {
            stdinWriter = stdinPipe.fileHandleForWriting
        }
    }

    /// A pipe whose two descriptors are close-on-exec, made while no child is being
    /// spawned (so none inherits it); the caller closes both.
    public static func closeOnExecPipe() throws -> (read: Int32, write: Int32) {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// The test's environment without any `VAULT_*` variable, plus `overrides`.
    public static func cleanEnvironment(_ overrides: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("VAULT_") }
        environment.merge(overrides) { $1 }
        return environment
    }

    public func write(_ data: Data) throws {
        try stdinWriter?.write(contentsOf: data)
    }

    public func closeStandardInput() {
        try? stdinWriter?.close()
    }

    /// Sends `signal` (for example `SIGTERM`, `SIGKILL`) to the child.
    public func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// The standard output received so far.
    public var outputSoFar: Data { outputReader.snapshot() }

    /// Waits until the child's standard output contains `text`, the child exits, or the timeout passes.
    /// - Returns: whether the text appeared.
    @discardableResult
    public func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if String(decoding: outputReader.snapshot(), as: UTF8.self).contains(text) { return true }
            if isFinished { return String(decoding: outputReader.snapshot(), as: UTF8.self).contains(text) }
            usleep(2_000)
        }
        return false
    }

    /// Waits until the child has printed `count` lines, exits, or the timeout passes.
    /// - Returns: whether the lines appeared.
    @discardableResult
    public func waitForLines(_ count: Int, timeout: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        func printed() -> Bool { outputReader.snapshot().lazy.filter { $0 == UInt8(ascii: "\n") }.count >= count }
        while ContinuousClock.now < deadline {
            if printed() { return true }
            if isFinished { return printed() }
            usleep(1_000)
        }
        return false
    }

    private var isFinished: Bool {
        lock.lock(); defer { lock.unlock() }
        if finished != nil { return true }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { finished = Self.result(status: status, output: Data(), error: Data()); return true }
        return false
    }

    /// Waits for the child to exit; kills it with SIGKILL and records a failure status if it
    /// outlives `timeout`, so a hung child never hangs the test run.
    public func wait(timeout: Duration = .seconds(120)) -> ProcessResult {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !isFinished {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                lock.lock()
                if finished == nil, waitpid(pid, &status, 0) == pid { finished = Self.result(status: status, output: Data(), error: Data()) }
                lock.unlock()
                break
            }
            usleep(1_000)
        }
        lock.lock(); defer { lock.unlock() }
        var result = finished!
        result.standardOutput = outputReader.waitForEnd()
        result.standardError = errorReader.waitForEnd()
        return result
    }

    /// ``wait(timeout:)`` for async code: the wait blocks a thread of its own, never one of
    /// the cooperative pool that the rest of the test run needs.
    public func exit(timeout: Duration = .seconds(120)) async -> ProcessResult {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.wait(timeout: timeout)) }
        }
    }

    private static func result(status: Int32, output: Data, error: Data) -> ProcessResult {
        // WIFEXITED / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        if signal == 0 {
            return ProcessResult(status: (status >> 8) & 0xff, signal: nil, standardOutput: output, standardError: error)
        }
        return ProcessResult(status: 128 + signal, signal: signal, standardOutput: output, standardError: error)
    }

    /// Runs a program to completion.
    public static func run(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, standardInput: Data = Data(), timeout: Duration = .seconds(120)) throws -> ProcessResult {
        try ChildProcess(executable, arguments, environment: environment, standardInput: standardInput).wait(timeout: timeout)
    }
}

/// A pipe whose ends are close-on-exec (Foundation's `Pipe` is not, on every platform).
private struct CloexecPipe {
    let fileHandleForReading: FileHandle
    let fileHandleForWriting: FileHandle

    init() throws {
        // pipe2(O_CLOEXEC) is hidden behind _GNU_SOURCE; pipe + fcntl is race-free here
        // because every spawn holds `ChildProcess.spawnLock`.
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        fileHandleForReading = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        fileHandleForWriting = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
    }
}

/// Drains a pipe on a background thread so a chatty child never blocks on a full pipe.
private final class PipeReader: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock(); data.append(chunk); lock.unlock()
            }
            try? handle.close()
            done.signal()
        }
    }

    func snapshot() -> Data {
        lock.lock(); defer { lock.unlock() }
        return data
    }

    func waitForEnd() -> Data {
        done.wait()
        done.signal()
        return snapshot()
    }
}
