import CVaultCLI
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

enum Hardening {
    /// Called first thing in `main`, before any passphrase, key or secret is read: a
    /// crash afterwards must not write them to a core file, and other processes of the
    /// same user must not read them through ptrace or `/proc/PID/mem`.
    static func disableCoreDumps() throws(CLIError) {
        guard vault_cli_disable_core_dumps() == 0 else { throw .cannotHarden(errno: errno) }
    }

    /// A write past `ulimit -f` raises SIGXFSZ, whose default action kills the process
    /// without a word (status 153). Ignored, the write fails with EFBIG instead, which
    /// the storage reports and the tool turns into its usual one-line error, with the
    /// transaction rolled back.
    static func reportFileSizeLimitAsError() {
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Opens `/dev/null` on any of descriptors 0, 1 and 2 that the parent left closed, so
    /// the vault file or the terminal can never become "standard output" by accident and
    /// receive a secret.
    static func ensureStandardDescriptors() {
        for fd in STDIN_FILENO...STDERR_FILENO where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0 && opened != fd {
                dup2(opened, fd)
                close(opened)
            }
        }
    }
}
