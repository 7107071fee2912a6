#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one policy for files that hold a secret: a host key file, a key file, a passphrase
/// file and a host key's pins, in the library and the tool alike.
///
/// Symbolic links are followed, since secret stores mount files behind them (Kubernetes
/// points `NAME` at `..data/NAME` and `..data` at a dated directory); what is checked is
/// the file they reach: a regular file (or, where the caller allows it, a pipe, which
/// holds nothing at rest), owned by this user or root (which provisions service
/// secrets), that neither group nor others may read or write, as ssh requires of a
/// private key. The checks are made with `fstat` on the descriptor that is then read, so
/// the file cannot be swapped between the check and the read.
package enum SecretFile {
    /// Why a secret file was refused.
    package enum Refusal: Error, Equatable {
        /// `open(2)` or `fstat(2)` failed with this `errno`.
        case cannotOpen(errno: Int32)
        /// Neither a regular file nor an allowed pipe (`st_mode`).
        case notRegular(mode: UInt32)
        /// Owned by someone other than this user or root.
        case otherOwner(uid: UInt32)
        /// Group or others may read or write it (`st_mode`).
        case othersCanAccess(mode: UInt32)
    }

    /// Opens `path` for reading if the file it reaches passes the checks above; the
    /// caller closes the returned descriptor (close-on-exec).
    ///
    /// - Parameter allowingPipe: whether a FIFO (`/dev/stdin` on a pipe, `<(...)`) is
    ///   accepted. Without it a FIFO is opened without waiting for a writer, then refused.
    package static func open(_ path: String, allowingPipe: Bool) throws(Refusal) -> Int32 {
        let fd = SystemIO.retryingInterrupted {
            Self.systemOpen(path, O_RDONLY | O_CLOEXEC | (allowingPipe ? 0 : O_NONBLOCK))
        }
        guard fd >= 0 else { throw .cannotOpen(errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .cannotOpen(errno: code)
        }
        if let refusal = refusal(mode: UInt32(info.st_mode), owner: UInt32(info.st_uid), allowingPipe: allowingPipe) {
            close(fd)
            throw refusal
        }
        if !allowingPipe {
            // Reads then block as usual.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        }
        return fd
    }

    /// What is wrong with a file of this mode and owner, or `nil` when it passes.
    private static func refusal(mode: UInt32, owner: UInt32, allowingPipe: Bool) -> Refusal? {
        let type = mode & UInt32(S_IFMT)
        if allowingPipe, type == UInt32(S_IFIFO) { return nil }
        guard type == UInt32(S_IFREG) else { return .notRegular(mode: mode) }
        guard owner == UInt32(geteuid()) || owner == 0 else { return .otherOwner(uid: owner) }
        guard mode & 0o077 == 0 else { return .othersCanAccess(mode: mode) }
        return nil
    }

    /// `open(2)` under a name the enum's own `open` does not shadow.
    private static func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags)
        #else
        Darwin.open(path, flags)
        #endif
    }
}
