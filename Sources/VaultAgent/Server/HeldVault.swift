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
import VaultKit

/// A file's identity: a vault replaced by another file (a restore, a sync, `mv`) is a
/// different vault, even at the same path.
package struct FileIdentity: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The identity of the file at `path` itself (a symbolic link is not followed).
    package static func of(_ path: String) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

/// What the agent matches requests for a held vault by.
enum HeldVaultIdentity: Equatable, Sendable {
    /// A vault file, by its device and inode.
    case file(FileIdentity)
    /// A vault at an engine's URL, by that URL without a password (`Vault.location`). Rows have no
    /// inode; a vault dropped and created again under the same name has another key,
    /// which VaultKit reports as `keyChanged` at the next request that needs the keys.
    case database(String)

    /// The identity a request's target names.
    init(_ target: VaultTarget) {
        self = target.isDatabaseVault ? .database(target.path) : .file(FileIdentity(device: target.device, inode: target.inode))
    }

    /// Whether the vault at `path` is still the one unlocked: for a file, whether the
    /// path still leads to the same inode.
    func isCurrent(at path: String) -> Bool {
        switch self {
        case .file(let identity): FileIdentity.of(path) == identity
        case .database: true
        }
    }
}

/// One vault the agent has unlocked: VaultKit's `Vault` keeps the keys in locked,
/// zeroed-on-release memory; the agent only adds when to let go of it.
struct HeldVault: Sendable {
    let vault: Vault
    let identity: HeldVaultIdentity
    /// `nil`: never locked for idleness.
    let idleTimeout: Duration?
    var lastUsed: ContinuousClock.Instant
    /// The writer name the handle had when it was unlocked (its default, `user@machine` of
    /// the agent, which serves only its own user), recorded by writes that declare none.
    let writer: String

    func isIdle(at now: ContinuousClock.Instant) -> Bool {
        guard let idleTimeout else { return false }
        return now - lastUsed >= idleTimeout
    }

    func status(at now: ContinuousClock.Instant) -> HeldVaultStatus {
        let timeout = idleTimeout.map { UInt64($0.components.seconds) } ?? 0
        let left = idleTimeout.map { max($0 - (now - lastUsed), .zero).components.seconds } ?? 0
        return HeldVaultStatus(path: vault.location.description, idleTimeoutSeconds: timeout, secondsUntilLocked: UInt64(left))
    }
}
