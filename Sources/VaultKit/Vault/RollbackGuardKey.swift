#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that authenticates this user's rollback records: 32 random bytes in the
/// guard's directory (`key`, mode 0600), created once.
///
/// Why a key of the user's own and not one derived from the vault's master key: a
/// re-key (`vault rekey`, `vault passwd`, `vault host remove`) replaces the master key,
/// so a copy of the vault from before it holds a key under which the record does not
/// authenticate. A record checked with the vault's key could then not be told from a
/// forged one, and was taken as missing: every re-key switched the guard off.
struct RollbackGuardKey {
    static let fileName = "key"
    static let byteCount = 32

    let path: String
    private let key: SecureBuffer

    /// The key in `directory`, or `nil` when there is none yet.
    static func load(directory: String) throws(VaultError) -> RollbackGuardKey? {
        let path = directory + "/" + fileName
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io(path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(path: path, errno: errno) }
        guard info.st_uid == geteuid() else { throw .untrustedOwner(path: path, uid: UInt32(info.st_uid)) }
        guard info.st_mode & 0o077 == 0 else { throw .insecurePermissions(path: path, mode: UInt32(info.st_mode)) }
        guard info.st_size == byteCount else { throw .rollbackRecordInvalid(path: path) }
        let key = SecureBuffer(count: byteCount, lockInMemory: true)
        let count = key.withMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == byteCount else { throw .io(path: path, errno: count < 0 ? errno : EIO) }
        return RollbackGuardKey(path: path, key: key)
    }

    /// The key in `directory`, created first if there is none. Written whole to a
    /// temporary file and linked into place, so a process racing this one never reads a
    /// partial key, and the first key made is the one every process keeps.
    static func loadOrCreate(directory: String) throws(VaultError) -> RollbackGuardKey {
        if let key = try load(directory: directory) { return key }
        let temporary = try FileSystem.createTemporaryFile(besides: directory + "/" + fileName)
        defer { unlink(temporary) }
        let fd = open(temporary, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: temporary, errno: errno) }
        var bytes = Sodium.randomBytes(count: byteCount)
        defer { bytes.withUnsafeMutableBytes { Sodium.zero($0) } }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        let code = errno
        close(fd)
        guard written == byteCount else { throw .io(path: temporary, errno: written < 0 ? code : ENOSPC) }
        guard synced else { throw .io(path: temporary, errno: code) }
        if link(temporary, directory + "/" + fileName) != 0 && errno != EEXIST {
            throw .io(path: directory + "/" + fileName, errno: errno)
        }
        FileSystem.syncDirectory(of: directory + "/" + fileName)
        guard let key = try load(directory: directory) else { throw .io(path: directory + "/" + fileName, errno: ENOENT) }
        return key
    }

    /// `BLAKE2b-256(key, magic || vault_id || body)`, where `body` is the record's bytes
    /// between its magic and its MAC (docs/FORMAT.md section 10).
    func mac(magic: [UInt8], vaultID: [UInt8], body: [UInt8]) -> [UInt8] {
        Blake2b.hash(magic + vaultID + body, key: key)
    }
}
