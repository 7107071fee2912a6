#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How an existing vault file is opened: for writing where it can be written, else read
/// only or immutable, and with the pragmas every vault connection runs under.
extension VaultDatabase {
    /// Opens an existing vault file and checks that it is one: for reading and writing
    /// when this process can write it, its directory and its disk, else for reading only.
    ///
    /// Why reads must not need write access: a backup on read-only media, a vault made
    /// immutable (`chattr +i`), or one in a directory the user may not write must still
    /// open. SQLite's write-ahead log needs `-wal` and `-shm` files beside the vault;
    /// where they cannot be created and do not exist, the file is opened as immutable
    /// (nothing can change it there). Where a non-empty `-wal` exists it holds commits,
    /// so it is read through its `-shm`, or, with no `-shm`, the vault is refused rather
    /// than read without them. A full disk (no room for the side files) is the same case.
    static func openExisting(_ path: String, busyTimeoutMilliseconds: Int32) throws(StorageError) -> VaultDatabase {
        if let reason = FileSystem.whyNotWritable(path) {
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: reason)
        }
        let missing = FileSystem.missingSideFiles(of: path)
        do {
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: nil)
        } catch .io(let failed, let code) where code == ENOSPC || code == EDQUOT {
            // The side files could not be made: leave no empty ones behind, and read.
            FileSystem.removeEmptyFiles(missing)
            return try VaultDatabase(openingExisting: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: .io(path: failed, errno: code))
        }
    }

    private convenience init(openingExisting path: String, busyTimeoutMilliseconds: Int32, readOnlyBecause reason: StorageError?) throws(StorageError) {
        let access: SQLiteConnection.Access
        if reason == nil {
            access = .readWrite
        } else if FileSystem.size(of: path + "-wal") ?? 0 > 0 {
            // Commits sit in the log, and reading it takes a -shm file that cannot be made.
            guard FileSystem.size(of: path + "-shm") != nil else {
                if case .io(_, let code)? = reason { throw .io(path: path + "-wal", errno: code) }
                throw .io(path: path + "-wal", errno: EROFS)
            }
            access = .readOnly
        } else {
            access = .immutable
        }
        try self.init(connectingTo: path, access: access, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnlyBecause: reason)
        let applicationID = try integerPragma("application_id")
        guard applicationID == Int64(Self.applicationID) else { throw .notAVault(location: path) }
        try run("PRAGMA trusted_schema = OFF")
        try run("PRAGMA secure_delete = ON")
        try run("PRAGMA cell_size_check = ON")
        // Up to 64 MiB of page cache (SQLite's default is 2 MiB), filled only as pages are
        // read: lookup ids are random, so with the default a 100,000-item vault (~31 MiB)
        // re-read and spilled pages on nearly every insert of a bulk import (3-4 preads
        // and pwrites per item), and with 32 MiB a one-batch import of 100,000 items still
        // spilled (96k -> 108k items/s at 64 MiB; see Benchmarks/README.md). A single
        // `get` touches a handful of pages, so a short-lived process never grows to this.
        try run("PRAGMA cache_size = -65536")
        guard reason == nil else { return }
        // A returned write has reached the disk: WAL with a sync on every commit.
        try run("PRAGMA synchronous = FULL")
        let mode = try textPragma("journal_mode = WAL")
        guard mode == "wal" else { throw .io(path: path, errno: EIO) }
    }
}
