#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One vault's record file (docs/FORMAT.md section 10):
/// `"VKRG0003" || u64le(generation) || root || key_check || u8(n) || n × retired_key_check || MAC`,
/// 113 + 32·n bytes, MAC under this user's ``RollbackGuardKey``. Read and written under
/// `flock`, so two processes never move it backwards.
///
/// Besides the newest state, it remembers the master key that state was under (its
/// `masterKeyCheck`) and the keys the vault has retired: a state under a retired key is
/// rolled back whatever its generation. Why: a removed host still holds the old master
/// key, so it can write the vault as it was before its removal with any generation it
/// likes and a valid manifest tag; only the key tells that state from a newer one.
///
/// An empty file is no record (the vault was never recorded here). Anything else that
/// is not a record this user's key (or, for a format-1 record, the vault's manifest key)
/// authenticates is refused: taken as missing, it would let whoever replaced it switch
/// the guard off.
final class RollbackGuardFile: @unchecked Sendable {
    static let magic = Array("VKRG0003".utf8)
    /// The second format, without keys: read, and rewritten as the current format at the
    /// next record (its key then taken as the current one).
    static let formatTwoMagic = Array("VKRG0002".utf8)
    /// The first format, MACed under the vault's manifest key: carried over the same way.
    static let formatOneMagic = Array("VKRG0001".utf8)
    /// The length of a record of the first two formats.
    static let formatTwoCount = 8 + 8 + 32 + 32
    /// The length of a current record retiring no key.
    static let baseCount = 8 + 8 + 32 + 32 + 1 + 32
    /// How many retired master keys a record keeps, the oldest dropped first: 64 re-keys
    /// (`vault rekey`, `vault passwd` unless `--rewrap-only`, `vault host remove`) back,
    /// in at most 2161 bytes, one small write within a page. A state under a key retired
    /// longer ago than that is compared by its generation alone (docs/THREAT-MODEL.md).
    static let maximumRetiredKeys = 64
    static let maximumCount = baseCount + 32 * maximumRetiredKeys

    /// A state of the vault: its generation, manifest root, and the `masterKeyCheck` of
    /// the master key it was verified under.
    typealias State = (generation: UInt64, root: ManifestDigest, keyCheck: [UInt8])

    /// What a record says.
    struct Record {
        var generation: UInt64
        var root: ManifestDigest
        /// The key check of the newest state's master key; `nil` in a record of an
        /// earlier format, which did not say.
        var keyCheck: [UInt8]?
        /// The key checks of master keys this vault no longer uses, oldest first.
        var retired: [[UInt8]]
        var isCurrentFormat: Bool
    }

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
    /// - Parameter accepting: record the vault's state even if it is older, under a
    ///   retired key, or the record does not authenticate (a backup restored on purpose).
    /// - Parameter makingDurable: returns once the state read is durable (the storage's
    ///   ``DurabilityBarrierStorage``), called before it is recorded: a state another
    ///   connection committed may be readable before it is durable, and one recorded and
    ///   then lost in a server crash would look like a rollback.
    /// - Returns: why the state could not be recorded when it needed to be and this file
    ///   was opened with a read-only fallback; else `nil`.
    func check(
        keys: KeyHierarchy, accepting: Bool, state readState: () throws(VaultError) -> State, makingDurable: () throws(VaultError) -> Void
    ) throws(VaultError) -> VaultError? {
        try withLock { () throws(VaultError) -> VaultError? in
            let state = try readState()
            guard !accepting else {
                // The keys retired before are kept when the record still authenticates.
                let previous = try? read(keys: keys)
                try makingDurable()
                return try recordIfPossible(Self.nextRecord(after: previous ?? nil, for: state), keys: keys)
            }
            let seen = try read(keys: keys)
            if let seen {
                try throwIfRolledBack(state, seen)
                guard Self.needsRecording(state, after: seen) else { return nil }
            }
            try makingDurable()
            return try recordIfPossible(Self.nextRecord(after: seen, for: state), keys: keys)
        }
    }

    /// Compares a state a held vault has just verified (another process committed it)
    /// with the record; returns whether it is newer, for the caller to ``record(_:keys:)``
    /// once it is durable (another connection's commit may be readable before it is).
    ///
    /// That state was read before this took the lock, so a record ahead of it (or one
    /// that has retired its key) may be a commit made since: `currentState` reads the
    /// state again under the lock, and only a file still rolled back is. Not inside a
    /// write transaction (`inWriteTransaction`), whose snapshot no commit can have overtaken.
    func compare(
        _ state: State, keys: KeyHierarchy, inWriteTransaction: Bool, currentState: () throws(VaultError) -> State
    ) throws(VaultError) -> Bool {
        try withLock { () throws(VaultError) -> Bool in
            guard let seen = try read(keys: keys) else { return true }
            if Self.isRolledBack(state, seen) {
                guard !inWriteTransaction else { try throwIfRolledBack(state, seen); return false }
                try throwIfRolledBack(try currentState(), seen)
                return false
            }
            return Self.needsRecording(state, after: seen)
        }
    }

    /// Records a durable state (one this process has just committed, or one it read and
    /// waited for), unless the record is already at a later generation (another process
    /// committed after it) or has retired its key. Errors are dropped: the commit has
    /// happened, and a record that lags only weakens the next check.
    func record(_ state: State, keys: KeyHierarchy) {
        try? withLock { () throws(VaultError) in
            let seen = try read(keys: keys)
            if let seen {
                if seen.retired.contains(state.keyCheck) || seen.generation > state.generation { return }
                if seen.generation == state.generation && !Self.needsRecording(state, after: seen) { return }
            }
            _ = try recordIfPossible(Self.nextRecord(after: seen, for: state), keys: keys)
        }
    }

    /// Under a master key the record has retired, older than the record, or a different
    /// state at its generation.
    private static func isRolledBack(_ state: State, _ seen: Record) -> Bool {
        seen.retired.contains(state.keyCheck)
            || seen.generation > state.generation
            || (seen.generation == state.generation && seen.root != state.root)
    }

    private func throwIfRolledBack(_ state: State, _ seen: Record) throws(VaultError) {
        guard Self.isRolledBack(state, seen) else { return }
        throw .rolledBack(path: vaultPath, seenGeneration: seen.generation, fileGeneration: state.generation)
    }

    /// Whether a state that is not rolled back says more than the record: a later
    /// generation, a new master key, or a record of an earlier format to carry over.
    private static func needsRecording(_ state: State, after seen: Record) -> Bool {
        state.generation > seen.generation || seen.keyCheck != state.keyCheck || !seen.isCurrentFormat
    }

    /// The record of `state`, keeping what `previous` retired and retiring its key if
    /// `state` is under another: the first holder to see a new master key retires the
    /// old one, for good (a state accepted on purpose under a retired key takes it back).
    static func nextRecord(after previous: Record?, for state: State) -> Record {
        var retired = previous?.retired ?? []
        if let old = previous?.keyCheck, old != state.keyCheck, !retired.contains(old) { retired.append(old) }
        retired.removeAll { $0 == state.keyCheck }
        if retired.count > maximumRetiredKeys { retired.removeFirst(retired.count - maximumRetiredKeys) }
        return Record(generation: state.generation, root: state.root, keyCheck: state.keyCheck, retired: retired, isCurrentFormat: true)
    }

    private func withLock<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        guard fd >= 0 else { return try body() }
        guard SystemIO.retryingInterrupted({ flock(fd, LOCK_EX) }) == 0 else { throw .io(path: path, errno: errno) }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// The record, or `nil` for none (no file, or an empty one).
    private func read(keys: KeyHierarchy) throws(VaultError) -> Record? {
        guard fd >= 0 else { return nil }
        // One byte more than the longest record, to tell a longer file from a record.
        var bytes = [UInt8](repeating: 0, count: Self.maximumCount + 1)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw .io(path: path, errno: errno) }
        if count == 0 { return nil }
        guard count >= Self.formatTwoCount else { throw .rollbackRecordInvalid(path: path) }
        bytes.removeLast(bytes.count - count)
        let magic = Array(bytes[0..<8])
        let generation = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        let root = bytes.withUnsafeBytes { ManifestDigest(bytes: UnsafeRawBufferPointer(rebasing: $0[16..<48])) }
        guard let root else { throw .rollbackRecordInvalid(path: path) }
        let body = Array(bytes[8..<(count - 32)])
        let expected: [UInt8]
        var record = Record(generation: generation, root: root, keyCheck: nil, retired: [], isCurrentFormat: false)
        if magic == Self.magic, let key, count >= Self.baseCount, (count - Self.baseCount) % 32 == 0 {
            let retiredCount = Int(bytes[80])
            guard retiredCount <= Self.maximumRetiredKeys, count == Self.baseCount + 32 * retiredCount else {
                throw .rollbackRecordInvalid(path: path)
            }
            record.keyCheck = Array(bytes[48..<80])
            record.retired = (0..<retiredCount).map { Array(bytes[(81 + 32 * $0)..<(113 + 32 * $0)]) }
            record.isCurrentFormat = true
            expected = key.mac(magic: magic, vaultID: vaultID, body: body)
        } else if magic == Self.formatTwoMagic, let key, count == Self.formatTwoCount {
            expected = key.mac(magic: magic, vaultID: vaultID, body: body)
        } else if magic == Self.formatOneMagic, count == Self.formatTwoCount {
            expected = keys.rollbackGuardMAC(vaultID: vaultID, generation: generation, root: root).bytes
        } else {
            throw .rollbackRecordInvalid(path: path)
        }
        let valid = expected.withUnsafeBytes { expected in
            bytes.withUnsafeBytes { Sodium.constantTimeEqual(expected, UnsafeRawBufferPointer(rebasing: $0[(count - 32)...])) }
        }
        guard valid else { throw .rollbackRecordInvalid(path: path) }
        return record
    }

    /// Writes `record`, unless this process cannot record here: then returns why.
    private func recordIfPossible(_ record: Record, keys: KeyHierarchy) throws(VaultError) -> VaultError? {
        if let unrecordable { return unrecordable }
        guard let key, let keyCheck = record.keyCheck else { return .io(path: path, errno: ENOENT) }
        var body: [UInt8] = []
        withUnsafeBytes(of: record.generation.littleEndian) { body += $0 }
        body += record.root.bytes
        body += keyCheck
        body.append(UInt8(record.retired.count))
        for retired in record.retired { body += retired }
        let bytes = Self.magic + body + key.mac(magic: Self.magic, vaultID: vaultID, body: body)
        // One small write in place, within one page, then the end cut to its length (a
        // record never grows shorter but when one is accepted on purpose). A torn one
        // would not authenticate and be refused (then accepted with acceptingCurrentState).
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let cut = written == bytes.count ? ftruncate(fd, off_t(bytes.count)) == 0 : true
        guard written == bytes.count, cut else {
            let error = VaultError.io(path: path, errno: written < 0 || !cut ? errno : ENOSPC)
            guard readOnlyFallback else { throw error }
            unrecordable = error
            return error
        }
        return nil
    }
}
