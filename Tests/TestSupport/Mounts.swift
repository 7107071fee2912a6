import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Real file systems for tests of read-only media and full disks: a read-only bind
/// mount and a small tmpfs, made with mount(8). Only root can mount; where mounting
/// fails (not root, or a container without the capability), `isAvailable` is false
/// and the tests that need it say so.
public enum Mounts {
    public static let isAvailable: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = TestPaths.temporaryDirectory("mount-probe")
        guard run(["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]) else { return false }
        _ = unmount(probe)
        return true
    }()

    /// Mounts `directory` read-only at a new path, runs `body` with that path, unmounts.
    @discardableResult
    public static func withReadOnlyView<Result>(of directory: String, _ body: (String) throws -> Result) throws -> Result {
        let view = TestPaths.temporaryDirectory("ro-view")
        guard run(["--bind", directory, view]) else { throw MountError.failed("bind \(directory)") }
        defer { _ = unmount(view) }
        guard run(["-o", "remount,bind,ro", view]) else { throw MountError.failed("remount ro \(view)") }
        return try body(view)
    }

    /// Mounts a tmpfs of `kibibytes` at a new mode-0700 directory, runs `body`, unmounts.
    @discardableResult
    public static func withTmpfs<Result>(kibibytes: Int, _ body: (String) throws -> Result) throws -> Result {
        let mountPoint = TestPaths.temporaryDirectory("tmpfs")
        guard run(["-t", "tmpfs", "-o", "size=\(kibibytes)k,mode=0700", "tmpfs", mountPoint]) else { throw MountError.failed("tmpfs") }
        defer { _ = unmount(mountPoint) }
        return try body(mountPoint)
    }

    /// Fills the file system holding `directory` until a write fails with ENOSPC.
    public static func fill(_ directory: String) {
        let fd = open(directory + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0xA5, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        var byte: UInt8 = 1
        while write(fd, &byte, 1) > 0 {}
    }

    public enum MountError: Error { case failed(String) }

    private static func unmount(_ path: String) -> Bool {
        (try? ChildProcess.run("/usr/bin/umount", [path]).status) == 0
    }

    private static func run(_ arguments: [String]) -> Bool {
        (try? ChildProcess.run("/usr/bin/mount", arguments).status) == 0
    }
}
