#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One vault's record file: `"VKRG0002" || u64le(generation) || root || MAC`, 80 bytes,
/// MAC under this user's ``RollbackGuardKey`` (docs/FORMAT.md section 10). Read and
/// written under `flock`, so two processes never move it backwards.
///
/// An empty file is no record (the vault was never recorded here). Anything else that
/// is not a record this user's key (or, for a format-1 record, the vault's manifest key)
/// authenticates is refused: taken as missing, it would let whoever replaced it switch
/// the guard off.
final class RollbackGuardFile: @unchecked Sendable {
    static let magic = Array("VKRG0002".utf8)
    /// The first format, MACed under the vault's manifest key: read, and rewritten as
    /// the current format at the next record.
    static let formatOneMagic = Array("VKRG0001".utf8)
    static let recordCount = 8 + 8 + 32 + 32

    typealias State = (generation: UInt64, root: ManifestDigest)

    let path: String
    /// The vault's path, for the errors.
    let vaultPath: String
    /// `-1` when no record could be opened at all (reads go on without a comparison).
    private let fd: Int32
    private let vaultID: [UInt8]
    private let key: RollbackGuardKey?
    /// Why this process cannot record states here (the directory, key or record could
    /// not be created or written), or `nil` when it can. Reads go on without recording;
    /// writes refuse with it (``ensureRecordable()``).
    private(set) var unrecordable: VaultError?
    /// Opened with a read-only fallback: a record that cannot be written is kept in
    /// ``unrecordable`` rather than thrown.
    private let readOnlyFallback: Bool

    /// Opens (creating if needed) the record of `vaultID` in `rollbackGuard`'s directory.
    ///
    /// - Parameter readOnlyFallback: when the directory, key or record cannot be created
    ///   or opened for writing, open what can be read instead and keep the reason in
    ///   ``unrecordable``, rather than throw.
    init(_ rollbackGuard: RollbackGuard, vaultID: [UInt8], vaultPath: String, readOnlyFallback: Bool) throws(VaultError) {
        path = rollbackGuard.directory + "/" + vaultID.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        self.vaultID = vaultID
        self.vaultPath = vaultPath
        self.readOnlyFallback = readOnlyFallback
        (key, fd, unrecordable) = try Self.openFiles(directory: rollbackGuard.directory, record: path, readOnlyFallback: readOnlyFallback)
    }

    /// The key and record, created and opened for writing; or, with `readOnlyFallback`,
    /// what can be read when that fails, and why it failed.
    private static func openFiles(directory: String, record path: String, readOnlyFallback: Bool) throws(VaultError) -> (RollbackGuardKey?, Int32, VaultError?) {
        do {
            try FileSystem.createParentDirectories(of: path)
            try FileSystem.checkDirectory(of: path)
            let key = try RollbackGuardKey.loadOrCreate(directory: directory)
            return (key, try openRecord(path, flags: O_RDWR | O_CREAT), nil)
        } catch where readOnlyFallback && error.code != .rollbackRecordInvalid {
            // What can be read, under the same checks: a record to compare with, and the
            // key to authenticate it (`nil` if none: then only a format-1 record can be).
            do { try FileSystem.checkDirectory(of: path) } catch { return (nil, -1, error) }
            let key = try? RollbackGuardKey.load(directory: directory)
            return (key, (try? openRecord(path, flags: O_RDONLY)) ?? -1, error)
        }
    }

    private static func openRecord(_ path: String, flags: Int32) throws(VaultError) -> Int32 {
        let fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { let code = errno; close(fd); throw .io(path: path, errno: code) }
        guard info.st_uid == geteuid() else { close(fd); throw .untrustedOwner(path: path, uid: UInt32(info.st_uid)) }
        guard info.st_mode & 0o077 == 0 else { close(fd); throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
        return fd
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Throws why this process cannot record states here, if it cannot: a write whose
    /// commit could not be recorded would leave the record behind the file for good.
    func ensureRecordable() throws(VaultError) {
        if let unrecordable { throw unrecordable }
    }

    /// Compares the vault's state with the record, then records the state if it is newer.
    ///
    /// The state is read by `readState` while this holds the record's lock: another
    /// process commits, then records under the same lock, so a state read before taking
    /// it could be older than the record without any rollback (two `vault set`s at once).
    ///
    /// - Parameter accepting: record the vault's state even if it is older, or the record
    ///   does not authenticate (a backup restored on purpose).
    /// - Returns: why the state could not be recorded when it needed to be and this file
    ///   was opened with a read-only fallback; else `nil`.
    func check(keys: KeyHierarchy, accepting: Bool, state readState: () throws(VaultError) -> State) throws(VaultError) -> VaultError? {
        try withLock { () throws(VaultError) -> VaultError? in
            let state = try readState()
            if !accepting, let seen = try read(keys: keys) {
                if Self.isBehind(state, seen.state) {
                    throw .rolledBack(path: vaultPath, seenGeneration: seen.state.generation, fileGeneration: state.generation)
                }
                if seen.state.generation == state.generation && seen.isCurrentFormat { return nil }
            }
            // A record refused for its length is longer than the one written over it.
            if accepting && unrecordable == nil && ftruncate(fd, off_t(Self.recordCount)) != 0 && !readOnlyFallback {
                throw .io(path: path, errno: errno)
            }
            return try recordIfPossible(state, keys: keys)
        }
    }

    /// Compares a state a held vault has just verified (another process committed it)
    /// with the record, and records it if it is newer.
    ///
    /// That state was read before this took the lock, so a record ahead of it may be a
    /// commit made since: `currentState` reads the state again under the lock, and only
    /// a file still behind the record is rolled back. Not inside a write transaction
    /// (`inWriteTransaction`), whose snapshot no commit can have overtaken.
    func compare(
        _ state: State, keys: KeyHierarchy, inWriteTransaction: Bool, currentState: () throws(VaultError) -> State
    ) throws(VaultError) {
        try withLock { () throws(VaultError) in
            guard let seen = try read(keys: keys) else {
                _ = try? recordIfPossible(state, keys: keys)
                return
            }
            if Self.isBehind(state, seen.state) {
                guard !inWriteTransaction else {
                    throw .rolledBack(path: vaultPath, seenGeneration: seen.state.generation, fileGeneration: state.generation)
                }
                let current = try currentState()
                if Self.isBehind(current, seen.state) {
                    throw .rolledBack(path: vaultPath, seenGeneration: seen.state.generation, fileGeneration: current.generation)
                }
                return
            }
            if state.generation > seen.state.generation || !seen.isCurrentFormat { _ = try? recordIfPossible(state, keys: keys) }
        }
    }

    /// Records a state this process has just committed, unless the record is already at
    /// a later generation (another process committed after it). Errors are dropped: the
    /// commit has happened, and a record that lags only weakens the next check.
    func record(_ state: State, keys: KeyHierarchy) {
        try? withLock { () throws(VaultError) in
            if let seen = try read(keys: keys), seen.state.generation >= state.generation, seen.isCurrentFormat { return }
            _ = try recordIfPossible(state, keys: keys)
        }
    }

    /// Older than the record, or a different state at its generation.
    private static func isBehind(_ state: State, _ seen: State) -> Bool {
        seen.generation > state.generation || (seen.generation == state.generation && seen.root != state.root)
    }

    private func withLock<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        guard fd >= 0 else { return try body() }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io(path: path, errno: errno) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// The record, or `nil` for none (no file, or an empty one).
    private func read(keys: KeyHierarchy) throws(VaultError) -> (state: State, isCurrentFormat: Bool)? {
        guard fd >= 0 else { return nil }
        // One byte more than a record, to tell a longer file from a record.
        var bytes = [UInt8](repeating: 0, count: Self.recordCount + 1)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw .io(path: path, errno: errno) }
        if count == 0 { return nil }
        guard count == Self.recordCount else { throw .rollbackRecordInvalid(path: path) }
        let magic = Array(bytes[0..<8])
        let generation = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        let root = bytes.withUnsafeBytes { ManifestDigest(bytes: UnsafeRawBufferPointer(rebasing: $0[16..<48])) }
        guard let root else { throw .rollbackRecordInvalid(path: path) }
        let expected: [UInt8]
        if magic == Self.magic, let key {
            expected = key.mac(vaultID: vaultID, generation: generation, root: root)
        } else if magic == Self.formatOneMagic {
            expected = keys.rollbackGuardMAC(vaultID: vaultID, generation: generation, root: root).bytes
        } else {
            throw .rollbackRecordInvalid(path: path)
        }
        let valid = expected.withUnsafeBytes { expected in
            bytes.withUnsafeBytes { Sodium.constantTimeEqual(expected, UnsafeRawBufferPointer(rebasing: $0[48..<80])) }
        }
        guard valid else { throw .rollbackRecordInvalid(path: path) }
        return ((generation, root), magic == Self.magic)
    }

    /// Writes `state` as the record, unless this process cannot record here: then
    /// returns why.
    private func recordIfPossible(_ state: State, keys: KeyHierarchy) throws(VaultError) -> VaultError? {
        if let unrecordable { return unrecordable }
        guard let key else { return .io(path: path, errno: ENOENT) }
        var record = Self.magic
        withUnsafeBytes(of: state.generation.littleEndian) { record += $0 }
        record += state.root.bytes
        record += key.mac(vaultID: vaultID, generation: state.generation, root: state.root)
        // One small write in place, within one page. A torn one would not authenticate
        // and be refused (then accepted with acceptingCurrentState).
        let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == record.count else {
            let error = VaultError.io(path: path, errno: written < 0 ? errno : ENOSPC)
            guard readOnlyFallback else { throw error }
            unrecordable = error
            return error
        }
        return nil
    }
}
