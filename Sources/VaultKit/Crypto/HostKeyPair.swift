#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CSodium

/// One host's X25519 key pair, which unlocks a vault on that host without the vault's
/// passphrase or key (docs/FORMAT.md section 12).
///
/// The vault stores its master key sealed to each host's public key with libsodium's
/// `crypto_box_seal`; this private key opens the seal meant for this host. Keep the
/// private key in a file only this user can read (``init(privateKeyFile:)``, written by
/// ``writePrivateKey(toNewFile:)``) or hand it over from a secret manager
/// (``init(privateKey:)``). It lives in zeroed-on-release memory and is never printed.
///
/// ```swift
/// let host = try HostKeyPair(privateKeyFile: "/etc/app/host.key")
/// let vault = try Vault.open(at: path, hostKey: host, identity: VaultIdentity(fingerprint: pinned))
/// ```
public struct HostKeyPair: Sendable, CustomStringConvertible {
    /// The length of a private key, in bytes.
    public static let privateKeyByteCount = 32

    let privateKey: SecretBytes
    /// The public half, to give to a host that adds this one (``Vault/addHost(_:name:)-30m8k``).
    public let publicKey: HostPublicKey

    /// A new key pair from libsodium's generator.
    public static func generate() -> HostKeyPair {
        var publicBytes = [UInt8](repeating: 0, count: HostPublicKey.byteCount)
        let privateKey = SecretBytes(count: privateKeyByteCount) { secret in
            _ = crypto_box_keypair(&publicBytes, secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return HostKeyPair(privateKey: privateKey, publicBytes: publicBytes)
    }

    /// The key pair of exactly ``privateKeyByteCount`` private key bytes (the public key is derived).
    ///
    /// - Throws: ``VaultError/invalidArgument(_:)`` for any other length.
    public init(privateKey: SecretBytes) throws(VaultError) {
        guard privateKey.count == Self.privateKeyByteCount else {
            throw .invalidArgument(.hostPrivateKeyLength)
        }
        var publicBytes = [UInt8](repeating: 0, count: HostPublicKey.byteCount)
        privateKey.withUnsafeBytes { secret in
            _ = crypto_scalarmult_base(&publicBytes, secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        self.init(privateKey: privateKey, publicBytes: publicBytes)
    }

    private init(privateKey: SecretBytes, publicBytes: [UInt8]) {
        self.privateKey = privateKey
        // 32 bytes by construction.
        publicKey = try! HostPublicKey(bytes: publicBytes)
    }

    /// Reads a private key file: exactly 32 raw bytes in a regular file (reached through
    /// any symbolic links) owned by this user or root that no one else may read or write
    /// (`SecretFile`'s policy, the `vault` tool's for every secret file).
    ///
    /// - Throws: ``VaultError/io(path:errno:)``, ``VaultError/untrustedOwner(path:uid:)``,
    ///   ``VaultError/insecurePermissions(path:mode:)``, ``VaultError/invalidArgument(_:)``
    ///   for a file that is not a regular file or is of another length.
    public init(privateKeyFile path: String) throws(VaultError) {
        let fd: Int32
        do {
            fd = try SecretFile.open(path, allowingPipe: false)
        } catch {
            switch error {
            case .cannotOpen(let code): throw .io(path: path, errno: code)
            case .notRegular: throw .invalidArgument(.hostKeyFileNotRegular)
            case .otherOwner(let uid): throw .untrustedOwner(path: path, uid: uid)
            case .othersCanAccess(let mode): throw .insecurePermissions(path: path, mode: mode)
            }
        }
        defer { close(fd) }
        // One byte more than a key, to tell a longer file from a key.
        var count = 0
        var failure: Int32 = 0
        let bytes = SecretBytes(count: Self.privateKeyByteCount + 1) { buffer in
            while count < buffer.count {
                let read = SystemIO.retryingInterrupted { SystemIO.read(fd, buffer.baseAddress! + count, buffer.count - count) }
                if read < 0 { failure = errno; return }
                if read == 0 { break }
                count += read
            }
        }
        if failure != 0 { throw .io(path: path, errno: failure) }
        guard count == Self.privateKeyByteCount else {
            throw .invalidArgument(.hostPrivateKeyFileLength)
        }
        let key = bytes.withUnsafeBytes { source in
            SecretBytes(count: Self.privateKeyByteCount) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(Self.privateKeyByteCount))) }
        }
        try self.init(privateKey: key)
    }

    /// Writes the private key to a new file (mode 0600, which must not exist yet), synced.
    ///
    /// - Throws: ``VaultError/vaultAlreadyExists(path:)`` when the path is taken, ``VaultError/io(path:errno:)``.
    public func writePrivateKey(toNewFile path: String) throws(VaultError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw code == EEXIST ? .vaultAlreadyExists(path: path) : .io(path: path, errno: code)
        }
        var failure: Int32 = 0
        privateKey.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let result = SystemIO.retryingInterrupted { SystemIO.write(fd, bytes.baseAddress! + written, bytes.count - written) }
                if result < 0 { failure = errno; return }
                written += result
            }
            if fsync(fd) != 0 { failure = errno }
        }
        close(fd)
        if failure != 0 {
            unlink(path)
            throw .io(path: path, errno: failure)
        }
    }

    /// Opens a master key sealed to this key pair, or `nil` if it was sealed to another.
    func openSealed(_ sealed: [UInt8]) -> SecureBuffer? {
        guard sealed.count == Int(crypto_box_sealbytes()) + SecretBox.keyByteCount else { return nil }
        let masterKey = SecureBuffer(count: SecretBox.keyByteCount, lockInMemory: true)
        let status = masterKey.withMutableBytes { opened in
            privateKey.withUnsafeBytes { secret in
                crypto_box_seal_open(
                    opened.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count),
                    publicKey.bytes, secret.baseAddress!.assumingMemoryBound(to: UInt8.self)
                )
            }
        }
        return status == 0 ? masterKey : nil
    }

    public var description: String { "HostKeyPair(public: \(publicKey.base64))" }
}
