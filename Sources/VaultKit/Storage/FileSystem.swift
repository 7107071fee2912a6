#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations the vault needs, each failing with a typed error.
///
/// Creation is all-or-nothing: the new vault is built in a hidden temporary file next
/// to its final path, then `link(2)`ed into place, which fails with `EEXIST` if
/// anything appeared there meanwhile, so an existing file is never overwritten and a
/// half-created vault is never visible.
enum FileSystem {
    /// Facts about an existing vault file, its directory and SQLite's side files, checked
    /// before SQLite touches them (like ssh's `StrictModes` for keys).
    ///
    /// Why each check:
    /// - the file itself, not a symbolic link, owned by this user and writable by no one
    ///   else: anyone else who could write it could have replaced it;
    /// - its directory owned by this user or root and writable by no one else: in a
    ///   directory others can write (even a sticky one like `/tmp`), another user can
    ///   create `NAME-wal` or `NAME-shm` before VaultKit does, and SQLite would then keep
    ///   the vault's pages (salt, wrapped key, sealed items) in a file that user reads
    ///   and writes;
    /// - side files that exist: owned by this user, and readable or writable by no one
    ///   the vault file itself does not allow.
    static func checkExistingVault(at path: String) throws(VaultError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            throw code == ENOENT ? .vaultNotFound(path: path) : .io(path: path, errno: code)
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK { throw .symbolicLink(path: path) }
        guard type == S_IFREG else {
            if type == S_IFDIR { throw .io(path: path, errno: EISDIR) }
            throw .notAVault(path: path)
        }
        guard access(path, R_OK) == 0 else { throw .io(path: path, errno: errno) }
        let user = geteuid()
        guard info.st_uid == user else { throw .untrustedOwner(path: path, uid: UInt32(info.st_uid)) }
        guard info.st_mode & 0o022 == 0 else {
            throw .insecurePermissions(path: path, mode: UInt32(info.st_mode))
        }
        try checkDirectory(of: path)
        let vaultBits = info.st_mode & 0o777
        for suffix in ["-wal", "-shm", "-journal"] {
            var side = stat()
            guard lstat(path + suffix, &side) == 0 else { continue }
            if (side.st_mode & S_IFMT) == S_IFLNK { throw .symbolicLink(path: path + suffix) }
            guard side.st_uid == user else { throw .untrustedOwner(path: path + suffix, uid: UInt32(side.st_uid)) }
            guard (side.st_mode & S_IFMT) == S_IFREG, side.st_mode & 0o777 & ~vaultBits == 0 else {
                throw .insecurePermissions(path: path + suffix, mode: UInt32(side.st_mode))
            }
        }
    }

    /// The vault's directory: owned by this user or root, and writable by no one else.
    static func checkDirectory(of path: String) throws(VaultError) {
        let directory = directory(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else { throw .io(path: directory, errno: errno) }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw .untrustedOwner(path: directory, uid: UInt32(info.st_uid))
        }
        guard info.st_mode & 0o022 == 0 else {
            throw .insecurePermissions(path: directory, mode: UInt32(info.st_mode))
        }
    }

    /// Why this process cannot write the vault at `path` (as the error a write would
    /// give: a read-only file system, a file or directory it may not write, or an
    /// immutable one), or `nil` if it can.
    static func whyNotWritable(_ path: String) -> StorageError? {
        var volume = statvfs()
        if statvfs(path, &volume) == 0, volume.f_flag & UInt(ST_RDONLY) != 0 { return .io(path: path, errno: EROFS) }
        if access(path, W_OK) != 0 { return .io(path: path, errno: errno) }
        let directory = directory(of: path)
        if access(directory, W_OK) != 0 { return .io(path: directory, errno: errno) }
        return nil
    }

    /// SQLite's side files of `path` that do not exist now.
    static func missingSideFiles(of path: String) -> [String] {
        ["-wal", "-shm"].map { path + $0 }.filter { size(of: $0) == nil }
    }

    /// Removes those of `paths` that exist and hold nothing but zero bytes: side files
    /// SQLite made but could not fill. A `-shm` in use by another process has a non-zero
    /// header, and a `-wal` with anything in it has one too, so those are never removed.
    static func removeEmptyFiles(_ paths: [String]) {
        for path in paths {
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var onlyZeros = true
            while onlyZeros {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { onlyZeros = n == 0; break }
                onlyZeros = buffer[..<n].allSatisfy { $0 == 0 }
            }
            close(fd)
            if onlyZeros { unlink(path) }
        }
    }

    /// The size of the file at `path`, or `nil` if there is none.
    static func size(of path: String) -> Int? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Creates every missing directory above `path` with mode 0700.
    static func createParentDirectories(of path: String) throws(VaultError) {
        let parent = directory(of: path)
        var info = stat()
        if stat(parent, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .io(path: parent, errno: ENOTDIR) }
            return
        }
        guard errno == ENOENT, parent != path else { throw .io(path: parent, errno: errno) }
        try createParentDirectories(of: parent)
        if mkdir(parent, 0o700) != 0 && errno != EEXIST {
            throw .io(path: parent, errno: errno)
        }
    }

    /// A new, empty, mode-0600 file next to `path` with an unguessable name.
    static func createTemporaryFile(besides path: String) throws(VaultError) -> String {
        let name = temporaryName(besides: path)
        let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path, errno: errno) }
        close(fd)
        return name
    }

    /// `.NAME.<random hex>.creating` in the directory of `path`.
    static func temporaryName(besides path: String) -> String {
        let suffix = Sodium.randomBytes(count: 8).map { String($0, radix: 16) }.joined()
        return "\(directory(of: path))/.\(baseName(of: path)).\(suffix).creating"
    }

    /// Makes `temporary` appear at `path` unless something is already there.
    static func publish(_ temporary: String, at path: String) throws(VaultError) {
        if link(temporary, path) == 0 {
            unlink(temporary)
        } else {
            let code = errno
            if code == EEXIST { throw .vaultAlreadyExists(path: path) }
            // Some file systems have no hard links: fall back to check-then-rename.
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP else { throw .io(path: path, errno: code) }
            if access(path, F_OK) == 0 { throw .vaultAlreadyExists(path: path) }
            guard rename(temporary, path) == 0 else { throw .io(path: path, errno: errno) }
        }
        syncDirectory(of: path)
    }

    /// Removes a temporary database and any side files SQLite left next to it.
    static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    /// Makes a new directory entry durable: the file's own fsync does not cover its name.
    static func syncDirectory(of path: String) {
        let fd = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
