import Foundation
import ServiceLifecycle
import VaultProfile

/// The demo's "app": signs the user in, then applies the commands typed on standard
/// input, one per line, until stdin ends or the group shuts down.
///
///     nickname <text>    change the nickname locally (debounced write)
///     bio <text>         change the bio locally
///     remote <nickname>  deliver a profile through the simulated server stream
///     persist            write now
///     show               print the current profile, read synchronously
///     signout            sign out and delete the snapshot
///     quit               shut down gracefully, like Ctrl-C
struct CommandService: Service, CustomStringConvertible {
    let store: ProfileStore<DemoProfile>
    let account: String
    let lines: AsyncStream<String>
    let shutdown: @Sendable () async -> Void

    var description: String { "CommandService" }

    func run() async throws {
        // The group has installed its signal handlers before any service runs, so once
        // "ready" is printed, SIGTERM and Ctrl-C shut down gracefully.
        let loaded = try await store.start(account: account)
        if loaded.profile == nil {
            try await store.replace(with: DemoProfile(nickname: account))
        }
        let (serverUpdates, server) = AsyncStream.makeStream(of: DemoProfile.self)
        try await store.follow(serverUpdates)
        say("ready snapshot=\(describe(loaded))")

        for await line in lines.cancelOnGracefulShutdown() {
            let (command, argument) = split(line)
            do {
                switch command {
                case "": continue
                case "nickname": try await store.update { $0.nickname = argument }
                case "bio": try await store.update { $0.bio = argument }
                case "remote":
                    var profile = store.current ?? DemoProfile(nickname: argument)
                    profile.nickname = argument
                    profile.followers += 1
                    server.yield(profile)
                case "persist":
                    try await store.persist()
                    say("persisted")
                case "show": say("current \(store.current?.summary ?? "none")")
                case "signout":
                    try await store.signOut()
                    say("signed out")
                case "quit":
                    // Returning before the group is shutting down would count as a failure.
                    await shutdown()
                    try? await gracefulShutdown()
                    return
                default: say("unknown command: \(command)")
                }
            } catch {
                say("error: \(error)")
            }
        }
        server.finish()
        // End of input is not the end of the app: keep running until Ctrl-C or SIGTERM.
        try? await gracefulShutdown()
    }

    private func split(_ line: String) -> (String, String) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return (trimmed, "") }
        return (String(trimmed[..<space]), String(trimmed[trimmed.index(after: space)...]))
    }

    private func describe(_ result: ProfileLoadResult<DemoProfile>) -> String {
        switch result {
        case .none: "none"
        case .loaded(let profile): "loaded \(profile.summary)"
        case .migrated(let profile, let version): "migrated from=\(version) \(profile.summary)"
        case .discarded(let version): "discarded from=\(version)"
        case .unreadable(let version): "unreadable version=\(version)"
        }
    }
}

/// Writes one line to standard output at once, unbuffered (stdout is a pipe in tests).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Reads standard input lines on a thread of its own: `readLine` blocks.
func standardInputLines() -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream.makeStream(of: String.self)
    Thread.detachNewThread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    return lines
}
