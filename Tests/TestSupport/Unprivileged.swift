import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Running a program as the unprivileged user `nobody`, so that a file mode really
/// denies access: root, which CI runs the tests as, reads every file regardless.
public enum Unprivileged {
    public static let userID: UInt32 = 65_534

    /// Whether the tests run as root and `setpriv` (util-linux) can drop privileges.
    public static var isAvailable: Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    /// The command line that runs `executable` as `nobody`. The executable is copied
    /// into a fresh world-readable directory first: the build directory may sit below
    /// a directory that `nobody` cannot enter.
    public static func command(_ executable: String, _ arguments: [String]) throws -> (executable: String, arguments: [String]) {
        let directory = worldReadableDirectory()
        let copy = directory + "/" + URL(fileURLWithPath: executable).lastPathComponent
        try writeExecutable(copy, contents: Data(contentsOf: URL(fileURLWithPath: executable)))
        return ("/usr/bin/setpriv", ["--reuid=\(userID)", "--regid=\(userID)", "--clear-groups", copy] + arguments)
    }

    /// Writes through a close-on-exec descriptor: a copy made with an inheritable one
    /// can be held open for writing by a child that another test forks meanwhile, and
    /// executing it then fails with ETXTBSY ("Text file busy").
    private static func writeExecutable(_ path: String, contents: Data) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        try contents.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                guard written > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                offset += written
            }
        }
    }

    /// Runs `executable` as `nobody` and waits. Retries the rare "Text file busy": a
    /// child forked by another test at the moment of the copy shares its descriptor
    /// until that child's own exec.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        let (wrapper, wrapped) = try command(executable, arguments)
        var result = try ChildProcess.run(wrapper, wrapped, environment: environment)
        for _ in 0..<5 where result.stderr.contains("Text file busy") {
            usleep(50_000)
            result = try ChildProcess.run(wrapper, wrapped, environment: environment)
        }
        return result
    }

    /// A new directory under /tmp that every user can enter and read (mode 0755).
    public static func worldReadableDirectory() -> String {
        var template = Array("/tmp/vaultkit-unprivileged-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        chmod(path, 0o755)
        return path
    }
}
