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
/// `(generation, manifest root)` and the master key's check value (with the keys the
/// vault has retired) in a small file named for the vault's id, MACed with a
/// key of this user's own kept beside the records (not the vault's key, which a re-key
/// replaces), and opening compares the two, as does every later read that meets a state
/// committed by another process. A file older than the record, or under a master key the
/// vault has retired (a removed host writing back the state it knew, at any generation),
/// is ``VaultError/rolledBack(path:seenGeneration:fileGeneration:)``; a record that exists
/// but does not authenticate is ``VaultError/rollbackRecordInvalid(path:)``, never taken
/// as missing.
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
