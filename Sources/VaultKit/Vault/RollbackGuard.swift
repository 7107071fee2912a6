#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where VaultKit remembers, outside the vault files, the newest state of each vault
/// this user has opened or written, so that an older one is noticed.
///
/// Why: a vault file alone cannot tell its current state from an older copy of itself
/// (every older copy is self-consistent), nor notice that its `-wal` lost its last
/// commits (SQLite then opens the last state it can read). Every commit of a format-3
/// vault counts up an authenticated *generation*; with a guard, each commit also records
/// `(generation, manifest root)` in a small file named for the vault's id, MACed with a
/// key derived from the vault's master key, and opening compares the two. A file older
/// than the record is ``VaultError/rolledBack(path:seenGeneration:fileGeneration:)``.
///
/// For example:
///
/// ```swift
/// let vault = try Vault.open(at: path, passphrase: passphrase)
/// if let rollbackGuard = RollbackGuard.userStateDirectory {
///     try vault.useRollbackGuard(rollbackGuard)   // throws .rolledBack for an older file
/// }
/// ```
///
/// The record is only as safe as the directory holding it: it helps against someone
/// who can replace the vault file (a sync service, shared or removable storage, a
/// backup being restored) but not this user's home directory.
public struct RollbackGuard: Sendable, Hashable {
    /// The directory of the records, created with mode 0700 when first needed.
    public let directory: String

    /// Keeps the records in `directory` (created with mode 0700 on first use; it must
    /// belong to this user or root and be writable by no one else).
    public init(directory: String) {
        self.directory = directory
    }

    /// `$XDG_STATE_HOME/vaultkit/rollback`, else `$HOME/.local/state/vaultkit/rollback`,
    /// or `nil` when neither variable is set.
    public static var userStateDirectory: RollbackGuard? {
        if let state = environment("XDG_STATE_HOME") { return RollbackGuard(directory: state + "/vaultkit/rollback") }
        if let home = environment("HOME") { return RollbackGuard(directory: home + "/.local/state/vaultkit/rollback") }
        return nil
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}

/// One vault's record file: `"VKRG0001" || u64le(generation) || root || MAC`, 80 bytes,
/// MAC = `H(0x07 || vault_id || u64le(generation) || root)` under the manifest key
/// (docs/FORMAT.md section 10). Read and written under `flock`, so two processes never
/// move it backwards. A missing, short or unauthenticated record counts as none.
final class RollbackGuardFile: @unchecked Sendable {
    private static let magic = Array("VKRG0001".utf8)
    private static let recordCount = 8 + 8 + 32 + 32

    let path: String
    private let fd: Int32
    private let vaultID: [UInt8]

    init(_ rollbackGuard: RollbackGuard, vaultID: [UInt8]) throws(VaultError) {
        let directory = rollbackGuard.directory
        try FileSystem.createParentDirectories(of: directory + "/record")
        try FileSystem.checkDirectory(of: directory + "/record")
        path = directory + "/" + vaultID.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        self.vaultID = vaultID
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { let code = errno; close(fd); throw .io(path: path, errno: code) }
        guard info.st_uid == geteuid() else { close(fd); throw .untrustedOwner(path: path, uid: UInt32(info.st_uid)) }
        guard info.st_mode & 0o077 == 0 else { close(fd); throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
    }

    deinit { close(fd) }

    /// Compares the vault's state with the record, then records the state if it is newer.
    ///
    /// The state is read by `readState` while this holds the record's lock: another
    /// process commits, then records under the same lock, so a state read before taking
    /// it could be older than the record without any rollback (two `vault set`s at once).
    ///
    /// - Parameter accepting: record the vault's state even if it is older (a backup
    ///   restored on purpose).
    func check(
        keys: KeyHierarchy, vaultPath: String, accepting: Bool,
        state readState: () throws(VaultError) -> (generation: UInt64, root: ManifestDigest)
    ) throws(VaultError) {
        try withLock { () throws(VaultError) in
            let (generation, root) = try readState()
            if let seen = read(keys: keys), !accepting {
                if seen.generation > generation || (seen.generation == generation && seen.root != root) {
                    throw .rolledBack(path: vaultPath, seenGeneration: seen.generation, fileGeneration: generation)
                }
                if seen.generation == generation { return }
            }
            try write(generation: generation, root: root, keys: keys)
        }
    }

    /// Records a state this process has just committed, unless the record is already at
    /// a later generation (another process committed after it). Errors are dropped: the
    /// commit has happened, and a record that lags only weakens the next check.
    func record(generation: UInt64, root: ManifestDigest, keys: KeyHierarchy) {
        try? withLock { () throws(VaultError) in
            if let seen = read(keys: keys), seen.generation >= generation { return }
            try write(generation: generation, root: root, keys: keys)
        }
    }

    private func withLock<Result>(_ body: () throws(VaultError) -> Result) throws(VaultError) -> Result {
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .io(path: path, errno: errno) }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    private func read(keys: KeyHierarchy) -> (generation: UInt64, root: ManifestDigest)? {
        var bytes = [UInt8](repeating: 0, count: Self.recordCount)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == Self.recordCount, Array(bytes[0..<8]) == Self.magic else { return nil }
        return bytes.withUnsafeBytes { (record) -> (UInt64, ManifestDigest)? in
            let generation = UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            guard let root = ManifestDigest(bytes: UnsafeRawBufferPointer(rebasing: record[16..<48])) else { return nil }
            let valid = keys.rollbackGuardMAC(vaultID: vaultID, generation: generation, root: root).withLittleEndianBytes {
                Sodium.constantTimeEqual($0, UnsafeRawBufferPointer(rebasing: record[48..<80]))
            }
            return valid ? (generation, root) : nil
        }
    }

    private func write(generation: UInt64, root: ManifestDigest, keys: KeyHierarchy) throws(VaultError) {
        var record = Self.magic
        withUnsafeBytes(of: generation.littleEndian) { record += $0 }
        record += root.bytes
        record += keys.rollbackGuardMAC(vaultID: vaultID, generation: generation, root: root).bytes
        // One small write in place: a torn one fails its MAC and counts as no record.
        let written = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == record.count else { throw .io(path: path, errno: written < 0 ? errno : EIO) }
    }
}
