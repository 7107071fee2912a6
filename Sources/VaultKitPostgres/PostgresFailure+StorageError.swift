#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VaultKit

/// The boundary where SQLSTATEs become ``StorageError``s: nothing above the storage sees
/// a PostgreSQL code.
extension PostgresFailure {
    /// The server's and libpq's texts stay out of the error (they are free text, and a
    /// libpq text may quote the connection string): the failure is told by its SQLSTATE,
    /// or, without one, by what the connection saw, as an errno.
    func storageError(location: String) -> StorageError {
        guard let state = sqlState, !connectionLost else {
            if credentialsRefused { return .unavailable(location: location, errno: EACCES) }
            if tlsFailed { return .unavailable(location: location, errno: EPROTO) }
            return .unavailable(location: location, errno: neverConnected ? ECONNREFUSED : ECONNRESET)
        }
        switch state {
        case "55P03", "40P01", "40001", "57014":  // lock timeout, deadlock, serialization, statement timeout
            return .busy(location: location)
        case "57P01", "57P02", "57P03":  // the server ended the session (administrator, crash, shutting down)
            return .unavailable(location: location, errno: ECONNRESET)
        case "42P01":  // no such table: a database without vaults
            return .notFound(location: location)
        case "53100":
            return .io(path: location, errno: ENOSPC)
        case "53200":
            return .io(path: location, errno: ENOMEM)
        case "42501":
            return .io(path: location, errno: EACCES)
        case "25006":
            return .io(path: location, errno: EROFS)
        case "28000", "28P01":  // authentication refused
            return .unavailable(location: location, errno: EACCES)
        default:
            if state.hasPrefix("XX") { return .corrupted(reason: .storageDamaged) }
            if state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("42") {
                return .corrupted(reason: .storageStructureRefused)
            }
            return .unavailable(location: location, errno: EIO)
        }
    }
}
