#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit
#if canImport(Glibc)
import Glibc
#endif

/// The agent's socket, and framed messages over a Unix stream socket: a 4-byte
/// big-endian length, then that many bytes (docs/AGENT.md).
package enum AgentSocket {
    package static func directory(of socketPath: String) -> String {
        guard let slash = socketPath.lastIndex(of: "/") else { return "." }
        return slash == socketPath.startIndex ? "/" : String(socketPath[..<slash])
    }

    /// Creates the socket's directory (mode 0700) if it is the default one (`ownsDirectory`),
    /// and checks that no one else owns it or can write to it: someone who could would be able
    /// to put their own socket in the agent's place and collect passphrases.
    package static func prepareDirectory(for socketPath: String, ownsDirectory: Bool) throws(AgentError) {
        let directory = directory(of: socketPath)
        if ownsDirectory, mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw .socket(what: "cannot create \(directory)", errno: errno)
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw .socket(what: "cannot use \(directory)", errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .unsafeDirectory(path: directory, reason: "not a directory") }
        guard info.st_uid == geteuid() else { throw .unsafeDirectory(path: directory, reason: "it belongs to another user (uid \(info.st_uid))") }
        let forbidden: mode_t = ownsDirectory ? 0o077 : 0o022
        guard info.st_mode & forbidden == 0 else {
            throw .unsafeDirectory(path: directory, reason: "permissions \(String(info.st_mode & 0o777, radix: 8)) let others in (chmod 700)")
        }
    }

    /// Binds and listens, with the socket readable and writable by its owner only.
    package static func listen(at path: String) throws(AgentError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(what: "cannot create a socket", errno: errno) }
        let previous = umask(0o177)
        defer { umask(previous) }
        let bound = withAddress(path) { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .socket(what: "cannot listen on \(path)", errno: code)
        }
        chmod(path, 0o600)
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw .socket(what: "cannot listen on \(path)", errno: code)
        }
        return fd
    }

    /// Connects to the agent, or returns `nil` when none listens there. Refuses an agent
    /// run by another user: it must never see a passphrase or a secret.
    package static func connect(to path: String) throws(AgentError) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(what: "cannot create a socket", errno: errno) }
        let connected = withAddress(path) { Glibc.connect(fd, $0, $1) }
        guard connected == 0 else {
            let code = errno
            close(fd)
            if [ENOENT, ECONNREFUSED, ENOTDIR].contains(code) { return nil }
            throw .socket(what: "cannot connect to the agent at \(path)", errno: code)
        }
        guard let peer = peer(of: fd) else {
            let code = errno
            close(fd)
            throw .socket(what: "cannot check the agent at \(path)", errno: code)
        }
        guard peer.uid == geteuid() else {
            close(fd)
            throw .foreignAgent(uid: peer.uid)
        }
        return fd
    }

    /// The process at the other end, from the kernel (`SO_PEERCRED`), not from anything it says.
    package static func peer(of fd: Int32) -> (pid: Int32, uid: UInt32)? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, hidden from Swift behind _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return (credentials.pid, credentials.uid)
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let utf8 = Array(path.utf8)
        guard utf8.count < capacity, !utf8.contains(0) else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: utf8)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    // MARK: Frames

    /// Sends one frame; `MSG_NOSIGNAL` so a peer that went away gives EPIPE, not SIGPIPE.
    package static func send(_ body: SecretBytes, on fd: Int32) throws(AgentError) {
        let header = UInt32(body.count).bigEndian
        var failure = withUnsafeBytes(of: header) { sendAll($0, on: fd) }
        if failure == 0 { failure = body.withUnsafeBytes { sendAll($0, on: fd) } }
        guard failure == 0 else { throw .brokenConnection(reason: SystemMessage.text(failure)) }
    }

    /// Writes all of `bytes`; returns 0 or the `errno` that stopped it.
    private static func sendAll(_ bytes: UnsafeRawBufferPointer, on fd: Int32) -> Int32 {
        guard var next = bytes.baseAddress else { return 0 }
        var remaining = bytes.count
        while remaining > 0 {
            let n = SystemIO.retryingInterrupted { Glibc.send(fd, next, remaining, Int32(MSG_NOSIGNAL)) }
            if n < 0 { return errno }
            next += n
            remaining -= n
        }
        return 0
    }

    /// Receives one frame of at most `limit` bytes, or `nil` if the peer closed the
    /// connection between frames.
    package static func receive(on fd: Int32, limit: Int) throws(AgentError) -> SecretBytes? {
        var header = [UInt8](repeating: 0, count: 4)
        let got = header.withUnsafeMutableBytes { receiveAll(into: $0, on: fd) }
        guard got.errno == 0 else { throw .brokenConnection(reason: SystemMessage.text(got.errno)) }
        if got.count == 0 { return nil }
        guard got.count == 4 else { throw .brokenConnection(reason: "the connection closed mid-message") }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= limit else { throw .brokenConnection(reason: "a message of \(length) bytes exceeds the limit of \(limit)") }
        // Grown as bytes arrive (64 KiB at a time), not sized by the header up front: a
        // peer's claimed length alone does not make the agent allocate it.
        var body = SecretBytes(reservingCapacity: min(length, 64 * 1024))
        var remaining = length
        while remaining > 0 {
            let wanted = min(remaining, 64 * 1024)
            var n = (count: 0, errno: Int32(0))
            body.append(maxCount: wanted) { room in
                n = receiveAll(into: room, on: fd)
                return n.count
            }
            guard n.errno == 0 else { throw .brokenConnection(reason: SystemMessage.text(n.errno)) }
            guard n.count == wanted else { throw .brokenConnection(reason: "the connection closed mid-message") }
            remaining -= wanted
        }
        return body
    }

    /// Fills `buffer` unless the peer closes first: how many bytes arrived, and the
    /// `errno` of a failure (0 if none).
    private static func receiveAll(into buffer: UnsafeMutableRawBufferPointer, on fd: Int32) -> (count: Int, errno: Int32) {
        var filled = 0
        while filled < buffer.count {
            let n = SystemIO.retryingInterrupted { recv(fd, buffer.baseAddress! + filled, buffer.count - filled, 0) }
            if n < 0 { return (filled, errno) }
            if n == 0 { break }
            filled += n
        }
        return (filled, 0)
    }
}
