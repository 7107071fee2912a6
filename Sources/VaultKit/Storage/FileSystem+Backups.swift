#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hidden file a backup is built in, and what a killed backup leaves behind.
///
/// Why a lock: a backup killed halfway (SIGKILL, a power cut) leaves its
/// `.NAME.<random>.creating` file and SQLite's `-journal` beside the destination, where
/// nobody looks. The next backup to that destination removes them, but only those no
/// living backup holds: each backup keeps an exclusive `flock` on its file until it is
/// published or removed, and the kernel drops that lock when its process dies.
extension FileSystem {
    /// A new, empty, mode-0600 file next to `path`, locked for as long as the returned
    /// descriptor is open (the caller closes it).
    static func createLockedTemporaryFile(besides path: String) throws(VaultError) -> (path: String, fd: Int32) {
        let name = temporaryName(besides: path)
        let fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            unlink(name)
            throw .io(path: path, errno: code)
        }
        return (name, fd)
    }

    /// Closes the descriptor of ``createLockedTemporaryFile(besides:)``, releasing its lock.
    static func releaseLock(_ fd: Int32) {
        close(fd)
    }

    /// Removes the temporary files (and their side files) of backups to `path` that were
    /// killed: those no process holds locked. Errors are ignored; this is tidying.
    static func removeAbandonedTemporaryFiles(besides path: String) {
        let parent = directory(of: path)
        let prefix = "." + baseName(of: path) + "."
        guard let listing = opendir(parent) else { return }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix), name.hasSuffix(".creating") else { continue }
            let random = name.dropFirst(prefix.count).dropLast(".creating".count)
            guard !random.isEmpty, random.allSatisfy(\.isHexDigit) else { continue }
            names.append(parent + "/" + name)
        }
        closedir(listing)
        for name in names {
            let fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { continue }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { removeDatabaseFiles(name) }
            close(fd)
        }
    }
}
