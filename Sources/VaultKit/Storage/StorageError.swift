/// Why a ``VaultStorage`` call failed, in the storage layer's own terms.
///
/// The storage layer never throws ``VaultError``: the Vault layer converts these at
/// its side of the seam (``VaultStore``, `VaultError+Storage.swift`), so an engine other
/// than SQLite reports its failures in the same few words and the public error is
/// decided in one place.
/// No case carries row contents, only locations, reasons and `errno` values.
package enum StorageError: Error, Equatable {
    /// Another connection held the write lock longer than the busy timeout.
    case busy(location: String)
    /// The storage exists but is not a vault (another SQLite database, another file).
    case notAVault(location: String)
    /// The operating system refused or failed an operation on `path`.
    case io(path: String, errno: Int32)
    /// The stored data cannot be read as a vault (a malformed header, a damaged database
    /// file); the reason is one of the public error's, so the conversion keeps it as it is.
    case corrupted(reason: VaultError.Reason)
    /// The storage's schema is not exactly the one this format defines.
    case schemaChanged
    /// The write counter (format 3) has no row, or a negative one.
    case generationMissing
    case generationInvalid
    /// The header names a format newer than this version reads.
    case unsupportedFormatVersion(Int)
    /// No vault at `location` (a database holding no vault of that name).
    case notFound(location: String)
    /// Creating: a vault already exists at `location`.
    case alreadyExists(location: String)
    /// The storage could not be reached or refused the session (a database server):
    /// `errno` says how (`ECONNREFUSED`, `ECONNRESET`, `EACCES` for refused credentials,
    /// `EPROTO` for a TLS connection whose server could not be verified).
    case unavailable(location: String, errno: Int32)
}

/// The failure of a ``VaultStorage`` call that runs a caller's closure: either the
/// storage failed, or the closure threw, and then its error comes back unchanged.
package enum StorageFailure<BodyError: Error>: Error {
    case storage(StorageError)
    case body(BodyError)

    /// Runs a storage-only step inside a call that also runs a closure.
    package static func lift<Result>(_ step: () throws(StorageError) -> Result) throws(StorageFailure) -> Result {
        do { return try step() } catch { throw .storage(error) }
    }

    /// Runs the caller's closure, its error marked as the caller's.
    package static func passing<Result>(_ body: () throws(BodyError) -> Result) throws(StorageFailure) -> Result {
        do { return try body() } catch { throw .body(error) }
    }
}

extension StorageFailure {
    /// Runs a storage's driver calls that also call the engine's closure: the closure's
    /// failure comes back unchanged, any other error leaves through `translate`.
    package static func catching<Result>(_ body: () throws -> Result, translating translate: (any Error) -> StorageError) throws(StorageFailure) -> Result {
        do {
            return try body()
        } catch let failure as StorageFailure {
            throw failure
        } catch {
            throw .storage(translate(error))
        }
    }
}

extension StorageFailure where BodyError == StorageError {
    /// The one error of a call whose closure throws storage errors too (a storage
    /// running its own steps in a transaction).
    package var flattened: StorageError {
        switch self {
        case .storage(let error), .body(let error): error
        }
    }
}
