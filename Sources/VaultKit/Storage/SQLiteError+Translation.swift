internal import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite's result codes as ``StorageError``s: no SQLite code leaves the Storage layer.
extension SQLiteError {
    /// Whether `ulimit -f` limits the size of files this process writes. SQLite reports
    /// a write cut short by that limit (EFBIG, once SIGXFSZ is ignored) as
    /// `SQLITE_IOERR_WRITE` without keeping the errno, so under a limit that is taken as
    /// the cause rather than reported as a bare I/O error.
    private static var fileSizeIsLimited: Bool {
        var limit = rlimit()
        #if canImport(Glibc)
        let (resource, infinity) = (__rlimit_resource_t(RLIMIT_FSIZE.rawValue), rlim_t.max)  // RLIM_INFINITY is ~0
        #else
        let (resource, infinity) = (RLIMIT_FSIZE, RLIM_INFINITY)
        #endif
        return getrlimit(resource, &limit) == 0 && limit.rlim_cur != infinity
    }

    /// The boundary where SQLite's result codes become ``StorageError``s: `path` is the
    /// file the failed call was about.
    func translated(path: String) -> StorageError {
        switch primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(location: path)
        case SQLITE_NOTADB:
            return .notAVault(location: path)
        case SQLITE_CORRUPT:
            return .corrupted(reason: .storageDamaged)
        case SQLITE_FORMAT, SQLITE_MISMATCH, SQLITE_CONSTRAINT, SQLITE_SCHEMA, SQLITE_ERROR, SQLITE_RANGE:
            return .corrupted(reason: .storageStructureRefused)
        case SQLITE_NOMEM:
            return .io(path: path, errno: ENOMEM)
        case SQLITE_FULL:
            return .io(path: path, errno: systemErrno != 0 ? systemErrno : ENOSPC)
        case SQLITE_PERM, SQLITE_AUTH:
            return .io(path: path, errno: systemErrno != 0 ? systemErrno : EACCES)
        case SQLITE_READONLY:
            return .io(path: path, errno: systemErrno != 0 ? systemErrno : EROFS)
        default: // SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PROTOCOL, ...
            if systemErrno == 0, code == SQLITE_IOERR | (3 << 8),  // SQLITE_IOERR_WRITE
                Self.fileSizeIsLimited { return .io(path: path, errno: EFBIG) }
            return .io(path: path, errno: systemErrno != 0 ? systemErrno : EIO)
        }
    }
}
