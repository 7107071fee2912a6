#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import VaultKit
import VaultTransfer

/// What the CLI says when the rollback guard's own state (its directory, key or record)
/// cannot be written: a read goes on, comparing with the record whenever one can be
/// read, and ends with one note on standard error; a write is refused with a message
/// that names the guard's directory and `VAULT_ROLLBACK_GUARD`.
///
/// Why: a read that failed because `~/.local/state` was read-only, full, missing or not
/// this user's made the guard's housekeeping a reason to lose access to one's secrets;
/// and an error that named only a path did not say the problem was the guard's.
enum RollbackGuardNotice {
    private struct Pending {
        var error: VaultError
        var directory: String
        var vaultPath: String
        var discarded = false
    }

    private static let pending = Mutex<Pending?>(nil)

    /// Keeps why the guard in `directory` could not record `vaultPath`'s state, to note
    /// once when the process ends successfully (a failure is its own one line).
    static func remember(_ error: VaultError, directory: String, vaultPath: String) {
        let first = pending.withLock { (pending) -> Bool in
            defer { if pending == nil { pending = Pending(error: error, directory: directory, vaultPath: vaultPath) } }
            return pending == nil
        }
        if first { atexit { RollbackGuardNotice.writeNote() } }
    }

    /// No note: the process is ending with a failure message of its own.
    static func discard() {
        pending.withLock { $0?.discarded = true }
    }

    private static func writeNote() {
        guard let note = pending.withLock({ $0?.discarded == false ? $0 : nil }) else { return }
        let message = "vault: note: the rollback guard could not record this state of \(note.vaultPath) in \(note.directory) (\(note.error)); "
            + "reads still compare with its record when they can read one, writes are refused until the directory is writable (or VAULT_ROLLBACK_GUARD=off)"
        Output.write(Escaping.terminalSafe(message) + "\n", to: STDERR_FILENO)
    }

    /// The write-refusal message for an error about the guard's own state, or `nil` for
    /// any other error.
    static func refusal(for error: VaultError) -> String? {
        let remembered = pending.withLock { $0 }
        let directory = remembered?.directory ?? RollbackGuard.userStateDirectory?.directory
        guard let directory, [.io, .insecurePermissions, .untrustedOwner].contains(error.code) else { return nil }
        guard error == remembered?.error || error.path?.hasPrefix(directory + "/") == true || error.path == directory else { return nil }
        return "the rollback guard cannot record this write in its state directory \(directory) (\(error)); "
            + "make it writable by this user, or set VAULT_ROLLBACK_GUARD=off to write without the guard"
    }
}
