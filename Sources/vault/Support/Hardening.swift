import CVaultCLI
import Foundation

enum Hardening {
    /// Called first thing in `main`, before any passphrase, key or secret is read: a
    /// crash afterwards must not write them to a core file, and other processes of the
    /// same user must not read them through ptrace or `/proc/PID/mem`.
    static func disableCoreDumps() throws(CLIError) {
        guard vault_cli_disable_core_dumps() == 0 else { throw .cannotHarden(errno: errno) }
    }
}
