import Foundation
import Testing
import TestSupport
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// A `vault agent serve` of one test, on a socket of its own, in the foreground so the
/// test holds its process. Call ``stop()`` in a `defer`: an agent is never left behind.
final class TestAgent {
    let socketPath: String
    let process: ChildProcess
    private var result: ProcessResult?

    /// Starts the agent with its socket in `directory` and waits until it listens.
    init(socketDirectory directory: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        socketPath = directory + "/agent.sock"
        process = try ChildProcess(CLI.executable, ["agent", "serve"], environment: ChildProcess.cleanEnvironment(["VAULT_AGENT_SOCKET": socketPath]))
        let listening = process.waitForOutput(containing: "listening on")
        #expect(listening, "the agent did not start", sourceLocation: sourceLocation)
        if !listening { _ = stop() }
    }

    /// The environment that sends a `vault` command to this agent.
    var environment: [String: String] { ["VAULT_AGENT_SOCKET": socketPath] }

    /// Stops the agent with SIGTERM (which wipes and exits) and returns how it ended,
    /// with its log on standard error. Idempotent.
    @discardableResult
    func stop() -> ProcessResult {
        if let result { return result }
        process.send(SIGTERM)
        let finished = process.wait(timeout: .seconds(60))
        result = finished
        return finished
    }

    /// `vault agent status` through this agent.
    func status(_ cli: CLI) throws -> ProcessResult {
        try cli.run(["agent", "status"], env: environment, vault: false)
    }
}

extension CLI {
    /// A new vault holding service "s", account "a", secret "secret", unlocked in a new
    /// agent (socket in `socketDirectory`, else the vault's directory), which is stopped
    /// when `body` returns or throws.
    static func withUnlockedVault<Result>(
        _ label: String = #function, socketDirectory: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (CLI, TestAgent) throws -> Result
    ) throws -> Result {
        let cli = CLI(label)
        try cli.initVault(sourceLocation: sourceLocation)
        try cli.set("s", "a", "secret", sourceLocation: sourceLocation)
        let agent = try TestAgent(socketDirectory: socketDirectory ?? cli.directory, sourceLocation: sourceLocation)
        defer { agent.stop() }
        try cli.unlock(in: agent, sourceLocation: sourceLocation)
        return try body(cli, agent)
    }

    /// Runs a command through `agent` with no passphrase in the environment: it succeeds
    /// only if the agent does the work.
    func runThroughAgent(_ arguments: [String], agent: TestAgent, stdin: Data = Data()) throws -> ProcessResult {
        try run(arguments, stdin: stdin, env: agent.environment, unset: ["VAULT_PASSPHRASE"])
    }

    /// `vault unlock` of this vault in `agent`.
    func unlock(in agent: TestAgent, _ extra: [String] = [], env: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(["unlock"] + extra, env: agent.environment.merging(env) { $1 })
        #expect(result.status == 0, "unlock: \(result.stderr)", sourceLocation: sourceLocation)
    }
}

/// A raw connection to an agent socket, for sending what `vault` never would.
struct RawAgentConnection {
    let fd: Int32

    init?(_ path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); return nil }
    }

    /// Sends `bytes` (errors ignored: the agent may already have hung up).
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Everything the agent sends until it closes the connection or `shutdown` ends ours.
    func readToEnd() -> [UInt8] {
        shutdown(fd, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { bytes in SystemIO.retryingInterrupted { recv(fd, bytes.baseAddress, bytes.count, 0) } }
            if n <= 0 { return received }
            received += buffer[0..<n]
        }
    }

    func close() { Glibc.close(fd) }

    /// A frame: the 4-byte big-endian length, then `body`.
    static func frame(_ body: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) } + body
    }
}

/// Waits (without a deadline of its own: the test's process timeouts bound it) until
/// `condition` holds, checking every 20 ms, at most `attempts` times.
func eventually(attempts: Int = 3000, _ condition: () throws -> Bool) rethrows -> Bool {
    for _ in 0..<attempts {
        if try condition() { return true }
        usleep(20_000)
    }
    return false
}
