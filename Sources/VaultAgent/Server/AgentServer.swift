#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// The agent process: holds unlocked vaults and performs item operations for clients of
/// the same user, one thread per connection.
///
/// Locking lets go of the `Vault`, which wipes its keys at once: on `vault lock`, after
/// the idle timeout, when the vault's file is replaced, when another process changes
/// its passphrase or key, on SIGTERM, SIGINT or SIGHUP, and on `vault agent stop`.
package final class AgentServer: Sendable {
    package let socketPath: String
    private let ownsSocketDirectory: Bool
    private let hooks: AgentServerHooks
    private let held = Mutex<[HeldVault]>([])
    /// Taken around a write that names its writer: declaring the name and writing are two
    /// calls on a handle every client shares, and no other write may come between them.
    private let namedWrites = Mutex<Void>(())
    private let openConnections = Atomic<Int>(0)
    /// The bound socket, so shutting down never removes a socket another agent made.
    private let socketIdentity = Mutex<FileIdentity?>(nil)

    /// A stuck or hostile client ties up a thread; this many at once, then new
    /// connections are closed until some end.
    package static let maximumConnections = 64
    /// How often idle timeouts and replaced files are looked for.
    package static let sweepInterval: Int32 = 1000

    /// `ownsSocketDirectory`: the socket's directory is the tool's default one, created
    /// mode 0700 (``AgentSocket/prepareDirectory(for:ownsDirectory:)``), not one the user named.
    package init(socketPath: String, ownsSocketDirectory: Bool, hooks: AgentServerHooks) {
        self.socketPath = socketPath
        self.ownsSocketDirectory = ownsSocketDirectory
        self.hooks = hooks
    }

    /// Listens until stopped; never returns.
    package func run() throws(AgentError) -> Never {
        try AgentSocket.prepareDirectory(for: socketPath, ownsDirectory: ownsSocketDirectory)
        try acquireInstanceLock()
        // The instance lock is ours, so a socket file left here is a dead agent's.
        unlink(socketPath)
        let listener = try AgentSocket.listen(at: socketPath)
        var info = stat()
        if lstat(socketPath, &info) == 0 {
            socketIdentity.withLock { $0 = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) }
        }
        try handleTerminationSignals()
        AgentWipeWatch.install()
        hooks.listening(socketPath, getpid())
        hooks.log("started (pid \(getpid()))")
        while true {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Self.sweepInterval)
            sweep()
            guard ready > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            // Never inherited by anything the agent could start.
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            admit(client)
        }
    }

    /// One agent per socket: a second one started at the same time gives up here.
    private func acquireInstanceLock() throws(AgentError) {
        let lockPath = socketPath + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .socket(what: "cannot open \(lockPath)", errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .alreadyRunning(socket: socketPath) }
            throw .socket(what: "cannot lock \(lockPath)", errno: code)
        }
        // Kept open (and locked) for the life of the process.
    }

    /// Blocks the signals in every thread and takes them in one: the wipe runs as
    /// ordinary code, not in a signal handler.
    private func handleTerminationSignals() throws(AgentError) {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        let blocked = signals
        let failure = DetachedThread.start { [self] in
            var signals = blocked
            var received: Int32 = 0
            sigwait(&signals, &received)
            shutDown(reason: "signal \(received)")
        }
        if let failure { throw .socket(what: "cannot start the signal thread", errno: failure) }
    }

    /// Checks the peer before reading a byte: another user's process is refused and logged.
    private func admit(_ client: Int32) {
        guard let peer = AgentSocket.peer(of: client) else {
            close(client)
            return
        }
        guard hooks.admits(peer.pid, peer.uid) else {
            hooks.log("refused a connection from uid \(peer.uid) (pid \(peer.pid)): not this agent's user")
            close(client)
            return
        }
        guard openConnections.add(1, ordering: .relaxed).newValue <= Self.maximumConnections else {
            openConnections.subtract(1, ordering: .relaxed)
            hooks.log("refused a connection from pid \(peer.pid): \(Self.maximumConnections) connections already open")
            close(client)
            return
        }
        let failure = DetachedThread.start { [self] in
            serve(client)
            close(client)
            openConnections.subtract(1, ordering: .relaxed)
        }
        if let failure {
            hooks.log("refused a connection from pid \(peer.pid): cannot start a thread (\(SystemMessage.text(failure)))")
            close(client)
            openConnections.subtract(1, ordering: .relaxed)
        }
    }

    /// Answers requests on one connection until the client closes it. A malformed
    /// message gets a refusal and ends the connection; it never ends the agent.
    private func serve(_ client: Int32) {
        while true {
            let frame: SecretBytes
            do {
                guard let received = try AgentSocket.receive(on: client, limit: AgentProtocol.maximumRequestSize) else { return }
                frame = received
            } catch {
                try? AgentSocket.send(AgentResponse.refused(error.message).encode(), on: client)
                return
            }
            let request: AgentRequest
            do {
                request = try frame.withUnsafeBytes { (bytes) throws(MalformedMessage) in try AgentRequest.decode(bytes) }
            } catch {
                try? AgentSocket.send(AgentResponse.refused(error.reason).encode(), on: client)
                return
            }
            if case .stop = request {
                try? AgentSocket.send(AgentResponse.ok.encode(), on: client)
                shutDown(reason: "stopped by request")
            }
            let response = respond(to: request)
            do {
                try AgentSocket.send(response.encode(), on: client)
            } catch {
                return
            }
        }
    }

    package func respond(to request: AgentRequest) -> AgentResponse {
        switch request {
        case .status:
            sweep()
            let now = ContinuousClock.now
            return .status(pid: getpid(), vaults: held.withLock { $0.map { $0.status(at: now) } })
        case .unlock(let path, let credential, let isKey, let idleTimeoutSeconds):
            return unlock(path: path, credential: credential, isKey: isKey, idleTimeoutSeconds: idleTimeoutSeconds)
        case .lock(let path):
            let identity = path.flatMap(FileIdentity.of).map(HeldVaultIdentity.file)
            let count = release(reason: "locked on request") { path == nil || $0.vault.location.description == path || $0.identity == identity }
            return .count(UInt64(count))
        case .stop:
            return .ok
        case .holds(let target):
            return withVault(target) { _ throws(VaultError) in .ok }
        case .contains(let target, let service, let account):
            return withVault(target) { vault throws(VaultError) in .bool(try vault.contains(service: service, account: account)) }
        case .secret(let target, let service, let account):
            return withVault(target) { vault throws(VaultError) in .secret(try vault.secret(service: service, account: account)) }
        case .item(let target, let service, let account):
            return withVault(target) { vault throws(VaultError) in .item(try vault.item(service: service, account: account)) }
        case .write(let target, let mode, let keepHistory, let writer, let secret, let service, let account, let label, let generic):
            return withVault(target, writer: writer) { vault throws(VaultError) in
                switch mode {
                case .set: try vault.set(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
                case .add: try vault.add(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
                case .update: try vault.update(secret, service: service, account: account, label: label, generic: generic, keepHistory: keepHistory)
                }
                return .ok
            }
        case .delete(let target, let keepHistory, let writer, let service, let account):
            return withVault(target, writer: writer) { vault throws(VaultError) in .bool(try vault.delete(service: service, account: account, keepHistory: keepHistory)) }
        case .deleteAll(let target, let keepHistory, let writer, let service):
            return withVault(target, writer: writer) { vault throws(VaultError) in .count(UInt64(try vault.deleteAll(service: service, keepHistory: keepHistory))) }
        case .items(let target, let service):
            return withVault(target) { vault throws(VaultError) in .items(try vault.items(service: service)) }
        case .verify(let target):
            return withVault(target) { vault throws(VaultError) in .count(UInt64(try vault.verify())) }
        default:
            return respondAboutHistory(to: request)
        }
    }

    /// The item history requests (docs/AGENT.md, 0x19 to 0x1F).
    private func respondAboutHistory(to request: AgentRequest) -> AgentResponse {
        switch request {
        case .history(let target, let service, let account):
            return withVault(target) { vault throws(VaultError) in .versions(try vault.history(service: service, account: account)) }
        case .version(let target, let service, let account, let number):
            return withVault(target) { vault throws(VaultError) in
                let (item, secret) = try vault.itemWithSecret(service: service, account: account, version: number)
                return .itemWithSecret(item, secret)
            }
        case .restore(let target, let writer, let service, let account, let number):
            return withVault(target, writer: writer) { vault throws(VaultError) in
                try vault.restore(service: service, account: account, version: number)
                return .ok
            }
        case .purgeHistory(let target, let service, let account):
            return withVault(target) { vault throws(VaultError) in
                if let service, let account { return .count(UInt64(try vault.purgeHistory(service: service, account: account))) }
                return .count(UInt64(try vault.purgeHistory()))
            }
        case .changes(let target, let limit):
            // A limit beyond Int's range asks for everything, as no limit does.
            return withVault(target) { vault throws(VaultError) in .changes(try vault.changes(limit: limit.flatMap { Int(exactly: $0) })) }
        case .retention(let target):
            return withVault(target) { vault throws(VaultError) in .count(UInt64(try vault.historyRetention())) }
        case .setRetention(let target, let versions):
            guard let versions = Int(exactly: versions) else { return .refused("a retention out of range") }
            return withVault(target) { vault throws(VaultError) in
                try vault.setHistoryRetention(versions)
                return .ok
            }
        default:
            return .refused("not a request about item history")
        }
    }

    /// Opens the vault here, so the master key is derived in the agent and never travels.
    private func unlock(path: String, credential: SecretBytes, isKey: Bool, idleTimeoutSeconds: UInt64) -> AgentResponse {
        guard idleTimeoutSeconds <= 366 * 24 * 3600 else { return .refused("the idle timeout is longer than a year") }
        let timeout: Duration? = idleTimeoutSeconds == 0 ? nil : .seconds(Int64(idleTimeoutSeconds))
        if VaultEngines.isEngineURL(path) {
            return unlockDatabaseVault(url: path, credential: credential, isKey: isKey, idleTimeout: timeout)
        }
        guard path.hasPrefix("/") else { return .refused("the vault path must be absolute") }
        let before = FileIdentity.of(path)
        let vault: Vault
        do {
            vault = isKey ? try Vault.open(at: path, key: try VaultKey(credential)) : try Vault.open(at: path, passphrase: credential)
            // Checked by the hooks like any command's vault (the agent's commits recorded too).
            try hooks.checkOpened(vault)
        } catch {
            return .failure(error)
        }
        // The identity clients will be matched by must be that of the file just opened.
        guard let identity = FileIdentity.of(path), identity == before else {
            vault.close()
            return .refused("the vault file was replaced while it was being unlocked")
        }
        hold(vault, as: .file(identity), idleTimeout: timeout)
        return .ok
    }

    /// A vault at an engine's URL, opened with the agent's own environment for the
    /// engine's client (where it reads a password: ``VaultEngine/Texts/passwordSources``):
    /// the URL may not hold a password.
    private func unlockDatabaseVault(url: String, credential: SecretBytes, isKey: Bool, idleTimeout: Duration?) -> AgentResponse {
        // Never echoed: a malformed URL might hold a password.
        guard let location = try? VaultEngines.location(url), !location.holdsSecret else {
            return .refused("not a vault URL without a password")
        }
        let vault: Vault
        do {
            let storage = try location.storage(busyTimeout: Vault.defaultBusyTimeout)
            vault = isKey ? try Vault.open(storage, key: try VaultKey(credential)) : try Vault.open(storage, passphrase: credential)
            try hooks.checkOpened(vault)
        } catch {
            return .failure(error)
        }
        hold(vault, as: .database(vault.location.description), idleTimeout: idleTimeout)
        return .ok
    }

    /// Keeps `vault`, letting go of a vault held before under the same identity.
    private func hold(_ vault: Vault, as identity: HeldVaultIdentity, idleTimeout: Duration?) {
        let replaced = held.withLock { held in
            let previous = held.filter { $0.identity == identity }
            held.removeAll { $0.identity == identity }
            held.append(HeldVault(vault: vault, identity: identity, idleTimeout: idleTimeout, lastUsed: .now, writer: (try? vault.writer()) ?? ""))
            return previous
        }
        replaced.forEach { $0.vault.close() }
        hooks.log("unlocked \(vault.location.description)")
    }

    /// Runs `body` with the vault the client means, if it is held and its file is still
    /// the one unlocked; errors are reported with the client's spelling of the path.
    ///
    /// A write records `writer`, the name the client's command declared (`nil`: the name
    /// the agent's handle had when it was unlocked), as if the client had written itself.
    private func withVault(_ target: VaultTarget, writer: String?? = .none, _ body: (Vault) throws(VaultError) -> AgentResponse) -> AgentResponse {
        let wanted = HeldVaultIdentity(target)
        let found: (vault: Vault, writer: String)? = held.withLock { held in
            guard let index = held.firstIndex(where: { $0.identity == wanted }) else { return nil }
            held[index].lastUsed = .now
            return (held[index].vault, held[index].writer)
        }
        guard let (vault, unlockedWriter) = found else { return .notHeld }
        guard wanted.isCurrent(at: vault.location.description) else {
            release(reason: "the file was replaced") { $0.identity == wanted }
            return .notHeld
        }
        do {
            guard case .some(let declared) = writer else { return try body(vault) }
            return try namedWrites.withLock { _ throws(VaultError) in
                try vault.declareWriter(declared ?? unlockedWriter)
                return try body(vault)
            }
        } catch .closed {
            // Locked while this request waited: the client goes on without the agent.
            return .notHeld
        } catch .keyChanged {
            release(reason: "its passphrase or key was changed by another process") { $0.identity == wanted }
            return .notHeld
        } catch {
            return .failure(WireVaultError.respelled(error, from: vault.location.description, to: target.path))
        }
    }

    /// Locks vaults that were idle too long or whose file was replaced.
    private func sweep() {
        let now = ContinuousClock.now
        release(reason: "idle timeout") { $0.isIdle(at: now) }
        release(reason: "the file was replaced") { !$0.identity.isCurrent(at: $0.vault.location.description) }
    }

    /// Removes the matching vaults and closes them (which wipes their keys), outside
    /// the lock: a close waits for an operation in progress on another thread.
    @discardableResult
    private func release(reason: String, where matches: (HeldVault) -> Bool) -> Int {
        let released = held.withLock { held in
            let matching = held.filter(matches)
            held.removeAll(where: matches)
            return matching
        }
        for entry in released {
            let before = AgentWipeWatch.snapshot()
            entry.vault.close()
            hooks.log("locked \(entry.vault.location.description): \(reason)" + AgentWipeWatch.report(since: before))
        }
        return released.count
    }

    private func shutDown(reason: String) -> Never {
        let count = release(reason: reason) { _ in true }
        let ours = socketIdentity.withLock { $0 }
        var info = stat()
        if let ours, lstat(socketPath, &info) == 0, FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) == ours {
            unlink(socketPath)
        }
        hooks.log("stopped (\(reason)); \(count) vault\(count == 1 ? "" : "s") locked")
        exit(0)
    }
}
